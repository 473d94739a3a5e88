// Before the latency harness's clock starts: every key's account, mode and limits, and the input
// PDFs (synthetic text pages; for OCR the same pages rendered to grey images) uploaded once per
// (operation, pages).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readPgm } from "../../test/support/lang-pages";
import { call, KeyPool, KeyState } from "./latency-client";
import { greyImage, imagePdf, operationTable, textPdf, type GreyImage } from "./latency-lib";
import { type LatencyOptions, log } from "./latency-options";

/** The same text pages rendered to grey images at `dpi` with pdftoppm (poppler-utils). */
function renderImagePdf(pages: number, seed: number, dpi: number): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "docproc-latency-"));
  try {
    const src = join(dir, "text.pdf");
    writeFileSync(src, textPdf(pages, seed));
    const images: GreyImage[] = [];
    for (let p = 1; p <= pages; p++) {
      const stem = join(dir, `p${p}`);
      const r = spawnSync(
        "pdftoppm",
        ["-r", String(dpi), "-gray", "-f", String(p), "-l", String(p), "-singlefile", src, stem],
        { encoding: "utf8", timeout: 120_000 },
      );
      if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT")
        throw new Error("OCR inputs are rendered with pdftoppm (Debian: poppler-utils), which is not on PATH");
      if (r.status !== 0) throw new Error(`pdftoppm failed (${r.status}): ${r.stderr}`);
      const { px, w, h } = readPgm(`${stem}.pgm`);
      images.push(greyImage(px, w, h));
      rmSync(`${stem}.pgm`);
    }
    return imagePdf(images);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Setup {
  pool: KeyPool;
  account: { id: string; mode: string; limits: Record<string, unknown> };
  /** `${op}:${pages}` → file id. */
  files: Map<string, string>;
}

export async function waitForTokens(opts: LatencyOptions, pool: KeyPool, maxS: number): Promise<void> {
  if (pool.full()) return;
  log(opts, `waiting (at most ${maxS} s) for the keys' rate-limit buckets to refill`);
  const deadline = performance.now() + maxS * 1000;
  while (!pool.full() && performance.now() < deadline) await Bun.sleep(250);
}

export async function setup(opts: LatencyOptions): Promise<Setup> {
  // Every key: which account and mode it acts in, and its limits.
  const accounts = await Promise.all(
    opts.keys.map(async (k, i) => {
      const a = await call(opts.url, new KeyState(k, 1, 1), "GET", "/account", { timeoutMs: opts.timeoutMs });
      if (a.status !== 200)
        throw new Error(`GET ${opts.url}/account with key #${i + 1} answered ${a.status} ${a.code ?? ""}`.trim());
      return a.json;
    }),
  );
  const first = accounts[0]!;
  const mixed = accounts.find((a) => a.id !== first.id || a.key?.mode !== first.key?.mode);
  if (mixed)
    throw new Error(
      "every key must belong to the same account and mode (the harness polls that account's job list and uploads the inputs once)",
    );
  const limits = first.limits ?? {};
  const rpm = Number(limits.requests_per_minute) || 60;
  const maxActive = Number(limits.concurrent_jobs) || 1_000_000;
  const pool = new KeyPool(opts.keys.map((k) => new KeyState(k, rpm, maxActive)));
  // GET /account above took one token from every key.
  for (const k of pool.keys) k.take();
  const maxPages = Number(limits.pages_per_job) || Infinity;
  const tooLong = opts.mix.find((e) => e.pages > maxPages);
  if (tooLong)
    throw new Error(`--mix asks for ${tooLong.pages} pages; this key's mode allows ${maxPages} pages per job`);

  const files = new Map<string, string>();
  for (const e of opts.mix) {
    const kind = operationTable[e.op]!.input;
    const seed = opts.seed * 1000 + e.pages;
    const bytes = kind === "image" ? renderImagePdf(e.pages, seed, opts.ocrDpi) : textPdf(e.pages, seed);
    const name = `latency-${kind}-${e.pages}p.pdf`;
    for (let attempt = 0; ; attempt++) {
      const key = pool.background(0) ?? pool.forSubmit();
      key.take();
      const form = new FormData();
      form.append("file", new Blob([bytes], { type: "application/pdf" }), name);
      const a = await call(opts.url, key, "POST", "/files", { form, timeoutMs: Math.max(opts.timeoutMs, 300_000) });
      if (a.status === 201) {
        if (a.json.page_count !== e.pages)
          throw new Error(`${name}: the service counted ${a.json.page_count} pages, expected ${e.pages}`);
        files.set(`${e.op}:${e.pages}`, a.json.id);
        log(opts, `uploaded ${name} (${(bytes.length / 1024).toFixed(0)} KiB) for ${e.op}:${e.pages}`);
        break;
      }
      if (a.status === 429 && attempt < 10) {
        await Bun.sleep(2000);
        continue;
      }
      throw new Error(`uploading ${name} answered ${a.status} ${a.code ?? ""}`.trim());
    }
  }
  return { pool, account: { id: first.id, mode: first.key?.mode, limits }, files };
}
