// The API spec (docs/api.md), Jobs and the operation catalogue; issue 3, points 2 and 8: every page operation end
// to end over real HTTP and real workers — merge, split (every_page, ranges, chunks -> ZIP),
// rotate, reorder, delete_pages, protect (AES-256), unlock (RC4 and AES-256 with a non-ASCII
// password; a wrong or missing password fails the job with invalid_options) — with the result
// downloaded and checked with qpdf --check, qpdf --show-npages, pdfinfo and pdftotext.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { errorCatalogue } from "../../src/domain/errors";
import { join } from "node:path";
import { expectEnvelope, client, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import {
  corpus,
  corpusFilesDir,
  createJob,
  keyFor,
  manifest,
  download,
  eventsFor,
  finishedJob,
  npages,
  pageText,
  qpdfCheck,
  rotations,
  run,
  tempDir,
  upload,
  uploadOk,
} from "../support/jobs";

const svc = useService({ workers: 2 }, 60_000);
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  tmp = tempDir();
}, 60_000);
afterAll(async () => {
  tmp?.cleanup();
}, 60_000);

let outputs = 0;

/** Uploads the inputs with a fresh key, runs the job to a final state, returns job + output path. */
async function runJob(
  operation: string,
  inputs: string[],
  options?: Record<string, unknown>,
  expectStatus = "succeeded",
) {
  const { key } = await svc.newKey();
  const files = [];
  for (const name of inputs) files.push(await uploadOk(svc, key, name));
  const body: Record<string, unknown> = {
    operation,
    ...(operation === "merge" ? { file_ids: files.map((f) => f.id) } : { file_id: files[0].id }),
  };
  if (options) body.options = options;
  const created = await createJob(svc, key, body);
  expect(created.status).toBe("queued");
  const job = await finishedJob(svc, key, created.id);
  if (job.status !== expectStatus)
    throw new Error(
      `job ${operation} ended ${job.status} (expected ${expectStatus}): ${JSON.stringify(job.error)}\n${svc.logs().slice(-2000)}`,
    );
  let out = "";
  if (job.status === "succeeded") {
    const d = await download(svc, key, job.id);
    expect(d.status).toBe(200);
    expect(d.headers.get("content-type")).toBe("application/octet-stream");
    expect(d.headers.get("x-service-sandbox")).toBe("true");
    expect(d.headers.get("content-disposition")).toContain(job.result.filename);
    expect(d.bytes.length).toBe(job.result.bytes);
    out = join(tmp.dir, `out-${++outputs}-${job.result.filename}`);
    writeFileSync(out, d.bytes);
  }
  return { key, files, job, out };
}

/** The words of one page, sorted: robust to layout changes that rotation causes. */
function words(path: string, page: number, password?: string): string[] {
  return pageText(path, page, password).split(" ").filter(Boolean).sort();
}

function expectCleanPdf(path: string, password?: string) {
  const c = qpdfCheck(path, password);
  if (c.code !== 0) throw new Error(`qpdf --check ${path} exited ${c.code}:\n${c.out}`);
}

function outlineTitles(path: string): string[] {
  const r = run(["qpdf", "--json", "--json-key=outlines", path]);
  const walk = (items: any[]): string[] => items.flatMap((o) => [o.title, ...walk(o.kids ?? [])]);
  return walk(JSON.parse(r.out).outlines ?? []);
}

function expectSucceededShape(job: any, kind: string, pages: number) {
  expect(job).toMatchObject({
    object: "job",
    status: "succeeded",
    kind,
    error: null,
    sandbox: true,
    livemode: false,
    attempts: 1,
  });
  expect(job.progress).toEqual({
    pages_done: job.progress.pages_total,
    pages_total: job.progress.pages_total,
    percent: 100,
  });
  expect(job.result.pages_processed).toBe(pages);
  expect(job.result.type).toBe("file");
  expect(job.result.download_url).toBe(`${svc.baseUrl}/jobs/${job.id}/result`);
  expect(Date.parse(job.result.expires_at) - Date.parse(job.finished_at)).toBeGreaterThan(86_400_000 - 5_000);
  expect(Date.parse(job.started_at)).toBeGreaterThanOrEqual(Date.parse(job.created_at));
  expect(Date.parse(job.finished_at)).toBeGreaterThanOrEqual(Date.parse(job.started_at));
}

describe("rotate", () => {
  test.skipIf(!hasCorpus)(
    "all pages 90 degrees clockwise: every page's /Rotate grows by 90, text and outline kept",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const { job, out } = await runJob("rotate", ["latex-outline-4-pages.pdf"], { degrees: 90 });
      expectSucceededShape(job, "page_ops", 4);
      expect(job.result.filename).toBe("latex-outline-4-pages-rotated.pdf");
      expect(job.result.content_type).toBe("application/pdf");
      expectCleanPdf(out);
      expect(npages(out)).toBe(4);
      expect(rotations(src).length).toBe(4);
      expect(rotations(out)).toEqual(rotations(src).map((r) => (r + 90) % 360));
      for (let p = 1; p <= 4; p++) {
        expect(words(src, p).length).toBeGreaterThan(5); // the checks below compare real text
        expect(words(out, p)).toEqual(words(src, p));
      }
      expect(outlineTitles(src).length).toBeGreaterThan(0);
      expect(outlineTitles(out)).toEqual(outlineTitles(src));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "selected pages only, on a file whose pages already carry /Rotate",
    async () => {
      const src = corpus("arabic-rotated-pages.pdf");
      const before = rotations(src);
      expect(before).toEqual([90, 180, 270, 0]);
      const { out } = await runJob("rotate", ["arabic-rotated-pages.pdf"], { degrees: 270, pages: [0, 3] });
      expectCleanPdf(out);
      expect(rotations(out)).toEqual(before.map((r, i) => ([0, 3].includes(i) ? (r + 270) % 360 : r)));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "180 degrees on one page of a two-page file",
    async () => {
      const src = corpus("rotated-page-attribute.pdf");
      const before = rotations(src);
      expect(before).toEqual([0, 90]);
      const { out } = await runJob("rotate", ["rotated-page-attribute.pdf"], { degrees: 180, pages: [1] });
      expect(rotations(out)).toEqual([before[0]!, (before[1]! + 180) % 360]);
      expect([0, 3]).toContain(qpdfCheck(out).code); // the input itself has qpdf warnings
    },
    60_000,
  );
});

describe("reorder and delete_pages", () => {
  test.skipIf(!hasCorpus)(
    "reorder by a full permutation: page i of the output is page order[i] of the input",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const order = [3, 1, 0, 2];
      const { job, out } = await runJob("reorder", ["latex-outline-4-pages.pdf"], { order });
      expectSucceededShape(job, "page_ops", 4);
      expectCleanPdf(out);
      expect(npages(out)).toBe(4);
      order.forEach((from, i) => expect(words(out, i + 1)).toEqual(words(src, from + 1)));
      expect(outlineTitles(out).sort()).toEqual(outlineTitles(src).sort());
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "delete_pages removes exactly the listed pages and keeps the rest in order",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const { job, out } = await runJob("delete_pages", ["latex-outline-4-pages.pdf"], { pages: [0, 2] });
      expect(job.kind).toBe("page_ops");
      expect(job.status).toBe("succeeded");
      expectCleanPdf(out);
      expect(npages(out)).toBe(2);
      expect(words(out, 1)).toEqual(words(src, 2));
      expect(words(out, 2)).toEqual(words(src, 4));
    },
    60_000,
  );
});

describe("merge", () => {
  test.skipIf(!hasCorpus)(
    "two PDFs in the given order",
    async () => {
      const a = corpus("latex-outline-4-pages.pdf");
      const b = corpus("latex-multicolumn.pdf");
      const { job, out, files } = await runJob("merge", ["latex-outline-4-pages.pdf", "latex-multicolumn.pdf"]);
      expectSucceededShape(job, "merge", 7);
      expect(job.file_ids).toEqual(files.map((f: any) => f.id));
      expect(job.file_id).toBeNull();
      expect(job.result.filename).toBe("merged.pdf");
      expectCleanPdf(out);
      expect(npages(out)).toBe(7);
      for (let p = 1; p <= 4; p++) expect(words(out, p)).toEqual(words(a, p));
      for (let p = 1; p <= 3; p++) {
        expect(words(b, p).length).toBeGreaterThan(5);
        expect(words(out, 4 + p)).toEqual(words(b, p));
      }
      expect(words(out, 4)).not.toEqual(words(out, 5));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "three inputs, reversed order and one file twice",
    async () => {
      const a = corpus("scanned-huckfinn-page.pdf");
      const b = corpus("latex-multicolumn.pdf");
      const { key } = await svc.newKey();
      const fa = await uploadOk(svc, key, "scanned-huckfinn-page.pdf");
      const fb = await uploadOk(svc, key, "latex-multicolumn.pdf");
      const created = await createJob(svc, key, { operation: "merge", file_ids: [fb.id, fa.id, fb.id] });
      expect(created.credits.pages_estimated).toBe(7);
      const job = await finishedJob(svc, key, created.id);
      expect(job.status).toBe("succeeded");
      const d = await download(svc, key, job.id);
      const out = join(tmp.dir, "merge3.pdf");
      writeFileSync(out, d.bytes);
      expectCleanPdf(out);
      expect(npages(out)).toBe(7);
      expect(words(out, 1)).toEqual(words(b, 1));
      expect(npages(a)).toBe(1);
      expect(words(out, 5)).toEqual(words(b, 1));
    },
    60_000,
  );
});

describe("split (result: a ZIP of PDFs)", () => {
  function unzipped(zip: string): { names: string[]; dir: string } {
    const dir = join(tmp.dir, `unzip-${++outputs}`);
    const r = run(["unzip", "-q", zip, "-d", dir]);
    expect(r.code).toBe(0);
    return { names: readdirSync(dir).sort(), dir };
  }

  test.skipIf(!hasCorpus)(
    "every_page (the default): page-0001.pdf ... one page each",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const { job, out } = await runJob("split", ["latex-outline-4-pages.pdf"]);
      expectSucceededShape(job, "split", 4);
      expect(job.options.mode).toBe("every_page");
      expect(job.result.content_type).toBe("application/zip");
      expect(job.result.filename).toBe("latex-outline-4-pages-split.zip");
      expect(readFileSync(out).subarray(0, 4).toString("binary")).toBe("PK\x03\x04");
      const { names, dir } = unzipped(out);
      expect(names).toEqual(["page-0001.pdf", "page-0002.pdf", "page-0003.pdf", "page-0004.pdf"]);
      names.forEach((n, i) => {
        expectCleanPdf(join(dir, n));
        expect(npages(join(dir, n))).toBe(1);
        expect(words(join(dir, n), 1)).toEqual(words(src, i + 1));
      });
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "ranges: 1-based inclusive [start, end] pairs in the given order, overlaps allowed",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const { job, out } = await runJob("split", ["latex-outline-4-pages.pdf"], {
        mode: "ranges",
        ranges: [
          [1, 2],
          [4, 4],
          [2, 3],
        ],
      });
      expect(job.result.pages_processed).toBe(5);
      const { names, dir } = unzipped(out);
      expect(names).toEqual(["part-0001.pdf", "part-0002.pdf", "part-0003.pdf"]);
      expect(names.map((n) => npages(join(dir, n)))).toEqual([2, 1, 2]);
      for (const n of names) expectCleanPdf(join(dir, n));
      expect(words(join(dir, "part-0002.pdf"), 1)).toEqual(words(src, 4));
      expect(words(join(dir, "part-0003.pdf"), 1)).toEqual(words(src, 2));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "chunks of chunk_size pages, the last one shorter",
    async () => {
      const { out } = await runJob("split", ["scanned-multipage-assembly.pdf"], { mode: "chunks", chunk_size: 4 });
      const { names, dir } = unzipped(out);
      expect(names).toEqual(["part-0001.pdf", "part-0002.pdf"]);
      expect(names.map((n) => npages(join(dir, n)))).toEqual([4, 2]);
    },
    60_000,
  );
});

describe("protect and unlock", () => {
  test.skipIf(!hasCorpus)(
    "protect: AES-256 with user and owner passwords and the four permissions",
    async () => {
      const src = corpus("latex-outline-4-pages.pdf");
      const { job, out } = await runJob("protect", ["latex-outline-4-pages.pdf"], {
        user_password: "u-secret",
        owner_password: "o-secret",
        allow_print: false,
        allow_copy: false,
        allow_modify: true,
        allow_annotate: false,
      });
      expectSucceededShape(job, "protect", 4);
      expect(run(["qpdf", "--requires-password", out]).code).toBe(0); // a password is needed
      expect(run(["qpdf", "--password=wrong", "--requires-password", out]).code).toBe(0);
      expect(run(["qpdf", "--password=u-secret", "--requires-password", out]).code).toBe(3);
      expect(run(["qpdf", "--password=o-secret", "--requires-password", out]).code).toBe(3);
      const enc = run(["qpdf", "--password=u-secret", "--show-encryption", out]).out;
      expect(enc).toContain("R = 6");
      expect(enc).toMatch(/stream encryption method: AESv3/);
      expect(enc).toMatch(/print low resolution: not allowed/);
      expect(enc).toMatch(/extract for any purpose: not allowed/);
      expect(enc).toMatch(/modify annotations: not allowed/);
      expect(enc).toMatch(/modify other: allowed/);
      expectCleanPdf(out, "u-secret");
      expect(npages(out, "u-secret")).toBe(4);
      expect(words(out, 2, "u-secret")).toEqual(words(src, 2));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "protect with an owner password only: opens without a password, permissions apply",
    async () => {
      const { out } = await runJob("protect", ["latex-outline-4-pages.pdf"], {
        owner_password: "o-only",
        allow_print: false,
      });
      expect(run(["qpdf", "--is-encrypted", out]).code).toBe(0);
      expect(run(["qpdf", "--requires-password", out]).code).toBe(3);
      expect(run(["qpdf", "--show-encryption", out]).out).toMatch(/print low resolution: not allowed/);
      expectCleanPdf(out);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "protect then unlock round-trips (a protected result can be uploaded and unlocked)",
    async () => {
      const { out: locked } = await runJob("protect", ["scanned-huckfinn-page.pdf"], { user_password: "round-trip" });
      const { job, out } = await runJob("unlock", [locked], { password: "round-trip" });
      expect(job.kind).toBe("unlock");
      expect(run(["qpdf", "--is-encrypted", out]).code).toBe(2);
      expectCleanPdf(out);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "unlock an RC4 file with its open password",
    async () => {
      const src = corpus("encrypted-libreoffice-rc4.pdf");
      const { job, out } = await runJob("unlock", ["encrypted-libreoffice-rc4.pdf"], { password: "openpassword" });
      expectSucceededShape(job, "unlock", 1);
      expect(job.result.filename).toBe("encrypted-libreoffice-rc4-unlocked.pdf");
      expect(run(["qpdf", "--is-encrypted", out]).code).toBe(2);
      expectCleanPdf(out);
      expect(npages(out)).toBe(1);
      expect(words(src, 1, "openpassword").length).toBeGreaterThan(3);
      expect(words(out, 1)).toEqual(words(src, 1, "openpassword"));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "unlock an AES-256 file with a non-ASCII (UTF-8) password",
    async () => {
      const src = corpus("encrypted-aes256-unicode-password.pdf");
      const { job, out } = await runJob("unlock", ["encrypted-aes256-unicode-password.pdf"], { password: "pässwört" });
      expect(job.status).toBe("succeeded");
      expect(run(["qpdf", "--is-encrypted", out]).code).toBe(2);
      expectCleanPdf(out);
      expect(npages(out)).toBe(1);
      expect(words(out, 1)).toEqual(words(src, 1, "pässwört"));
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "unlock an owner-password-only file needs no password",
    async () => {
      const { out } = await runJob("unlock", ["owner-password-aes-30-pages.pdf"]);
      expect(run(["qpdf", "--is-encrypted", out]).code).toBe(2);
      expect(npages(out)).toBe(30);
      expectCleanPdf(out);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "unlock with a wrong password: the job fails with error.code invalid_options, no result",
    async () => {
      const { key, job } = await runJob(
        "unlock",
        ["encrypted-libreoffice-rc4.pdf"],
        { password: "not-the-password" },
        "failed",
      );
      expect(job.error.code).toBe("invalid_options");
      expect(job.error.message.length).toBeGreaterThan(5);
      expect(job.result).toBeNull();
      expectEnvelope(await client(svc.baseUrl, key)("GET", `/jobs/${job.id}/result`), 409, "job_not_finished");
      const ev = await eventsFor(svc, job.id);
      expect(ev.map((e) => e.type)).toEqual(["job.failed"]);
      expect(ev[0].payload.data.object.error.code).toBe("invalid_options");
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "unlock without the password a file needs: invalid_options too",
    async () => {
      const { job } = await runJob("unlock", ["encrypted-aes256-unicode-password.pdf"], {}, "failed");
      expect(job.error.code).toBe("invalid_options");
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a page operation on a password-protected file fails with the documented file_encrypted code",
    async () => {
      const { job } = await runJob("rotate", ["encrypted-libreoffice-rc4.pdf"], { degrees: 90 }, "failed");
      expect(job.error.code).toBe("file_encrypted");
      expect(job.error.message).toContain("unlock");
      const codes = (await client(svc.baseUrl)("GET", "/errors")).json;
      expect(JSON.stringify(codes)).toContain("file_encrypted");
    },
    60_000,
  );
});

describe("every PDF of the corpus", () => {
  test.skipIf(!hasCorpus)(
    "rotate over real HTTP ends succeeded with a checkable PDF, or failed with a documented job code — never stuck, never internal_error",
    async () => {
      const jobCodes = Object.entries(errorCatalogue)
        .filter(([, d]) => (d.usedIn as readonly string[]).includes("job"))
        .map(([c]) => c);
      const names = readdirSync(corpusFilesDir)
        .filter((n) => n.endsWith(".pdf"))
        .sort();
      expect(names.length).toBeGreaterThan(40);
      const sandbox = await svc.newKey();
      let live = await keyFor(svc, sandbox.accountId, "live");
      const outcomes: Record<string, string> = {};
      for (const [i, name] of names.entries()) {
        if (i % 12 === 11) live = await keyFor(svc, sandbox.accountId, "live");
        const up = await upload(svc, live.key, name);
        if (up.status !== 201) {
          outcomes[name] = `upload ${up.status} ${up.json?.error?.code}`;
          continue;
        }
        const created = await createJob(svc, live.key, {
          operation: "rotate",
          file_id: up.json.id,
          options: { degrees: 90 },
        });
        const job = await finishedJob(svc, live.key, created.id, 30_000);
        if (job.status === "succeeded") {
          const d = await download(svc, live.key, job.id);
          const out = join(tmp.dir, `corpus-${i}.pdf`);
          writeFileSync(out, d.bytes);
          const c = qpdfCheck(out);
          outcomes[name] = `succeeded qpdf=${c.code}`;
          expect({ name, qpdf: c.code === 2 ? `errors: ${c.out.slice(0, 300)}` : "ok" }).toEqual({ name, qpdf: "ok" });
          if (manifest().get(name)?.features.includes("qpdf-check=ok"))
            expect({ name, pages: npages(out) }).toEqual({ name, pages: manifest().get(name)!.pages! });
        } else {
          outcomes[name] = `${job.status} ${job.error?.code}`;
          expect({ name, status: job.status }).toEqual({ name, status: "failed" });
          expect(jobCodes).toContain(job.error.code);
          expect({ name, code: job.error.code }).not.toEqual({ name, code: "internal_error" });
        }
      }
      console.log(
        JSON.stringify(
          Object.fromEntries(Object.entries(outcomes).filter(([, v]) => !v.startsWith("succeeded qpdf=0"))),
        ),
      );
    },
    120_000,
  );
});
