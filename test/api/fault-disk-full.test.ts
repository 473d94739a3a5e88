// DATA_DIR full: the service runs on a small tmpfs this test mounts (root only; skipped with one
// line otherwise) and unmounts afterwards. An upload that cannot be written answers 503
// storage_full with Retry-After, leaves no row, blob or scratch file, and once space returns
// the same upload succeeds.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectEnvelope, startService, type Service } from "../support/service";
import { multipart, postFiles } from "../support/jobs";
import { minimalPdf } from "../support/pdf";

setDefaultTimeout(90_000);

const isRoot = process.getuid?.() === 0;
const mount = mkdtempSync(join(tmpdir(), "docproc-full-"));
let mounted = false;
let svc: Service;

function sh(cmd: string[]): void {
  const p = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${cmd.join(" ")}: ${p.stderr.toString()}`);
}

beforeAll(async () => {
  if (!isRoot) return;
  sh(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0755", "tmpfs", mount]);
  mounted = true;
  svc = await startService({ env: { DATA_DIR: mount } });
});

afterAll(async () => {
  await svc?.stop();
  if (mounted) sh(["umount", mount]);
  rmSync(mount, { recursive: true, force: true });
});

function left(): { scratch: string[]; blobs: number } {
  const scratch = existsSync(join(mount, "tmp")) ? readdirSync(join(mount, "tmp")) : [];
  const files = join(mount, "blobs", "files");
  const blobs = existsSync(files) ? readdirSync(files).reduce((n, d) => n + readdirSync(join(files, d)).length, 0) : 0;
  return { scratch, blobs };
}

describe.skipIf(!isRoot)("DATA_DIR full", () => {
  test("an upload answers 503 storage_full with Retry-After, leaves nothing behind, and succeeds once space returns", async () => {
    if (!isRoot) return;
    const { key } = await svc.newKey();
    // Fill the disk, leaving less than the upload needs.
    const free = () => {
      const s = statfsSync(mount);
      return s.bavail * s.bsize;
    };
    const filler = join(mount, "filler");
    writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 256 * 1024)));
    // A valid PDF of about 1 MB (many pages).
    const pdf = minimalPdf(4000, "disk full");
    expect(pdf.length).toBeGreaterThan(512 * 1024);
    const mp = multipart([{ name: "file", filename: "big.pdf", contentType: "application/pdf", data: pdf }]);

    const r = await postFiles(svc, key, mp.body, mp.contentType);
    const e = expectEnvelope(r, 503, "storage_full");
    expect(e.type).toBe("api_error");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(left()).toEqual({ scratch: [], blobs: 0 });
    const [{ n }] = (await svc.sql`SELECT count(*)::int AS n FROM files`) as any;
    expect(n).toBe(0);

    // Other requests are still served while the disk is full.
    expect((await fetch(`${svc.baseUrl}/account`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

    rmSync(filler);
    const ok = await postFiles(svc, key, mp.body, mp.contentType);
    expect(ok.status).toBe(201);
    expect(ok.json.page_count).toBe(4000);
    expect(left().blobs).toBe(1);
  });
});
