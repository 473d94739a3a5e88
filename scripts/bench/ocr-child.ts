// Child process of ocr.bench.ts, ocr-eval.bench.ts and ocr-lang.bench.ts: runs our OCR over the
// files given in argv[2] (JSON: { threads, output, files[], languages?[], keepDir?, withPages?,
// detMaxSide?, claimDir? }; languages[i] is the `languages` option for files[i]; with claimDir,
// every child of a run is given every file and reads those it claims first, by creating
// claimDir/<index> exclusively: a shared queue, as workers take jobs) and prints
// { results, maxRssKb } as JSON, so the benchmark can
// read the peak RSS of a process doing only OCR (like a worker).
import { engine } from "../../src/engine/native";
import { ocrPaths } from "../../src/worker/operations/ocr";
import { openSync, closeSync } from "node:fs";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";

const job = JSON.parse(process.argv[2]!) as { threads: number; output: "blocks" | "searchable_pdf"; files: string[]; languages?: (string[] | null)[]; machineLock?: string; keepDir?: string; withPages?: boolean; detMaxSide?: number; claimDir?: string };
const e = engine();
const t0 = performance.now();
await e.ocrInit({ ...ocrPaths(), intraThreads: job.threads, machineLock: job.machineLock, detMaxSide: job.detMaxSide });
const initMs = performance.now() - t0;
const results: { file: string; ms: number; cpuMs: number; pages: number; text: string; engine: string; json?: unknown }[] = [];
let n = 0;
/** Whether this child takes file `i` (always without claimDir). */
function claim(i: number): boolean {
  if (!job.claimDir) return true;
  try {
    closeSync(openSync(join(job.claimDir, String(i)), "wx"));
    return true;
  } catch {
    return false;
  }
}
for (const file of job.files) {
  if (!claim(n)) {
    n++;
    continue;
  }
  // keepDir: the searchable PDFs are kept there (the OCRmyPDF comparison reads them back).
  const out = job.output !== "searchable_pdf" ? null : job.keepDir ? join(job.keepDir, basename(file)) : join(tmpdir(), `ocr-bench-${process.pid}-${n}.pdf`);
  const t = performance.now();
  const c = process.cpuUsage();
  const languages = job.languages?.[n] ?? undefined;
  const r = await e.ocr(file, out, { output: job.output, languages });
  const ms = performance.now() - t;
  // CPU time of the whole process (every thread) for this file: on a shared machine the wall
  // time measures the neighbours too.
  const cu = process.cpuUsage(c);
  const cpuMs = (cu.user + cu.system) / 1000;
  const j = JSON.parse(r.json);
  // withPages: the JSON pages too (lines and their boxes, for replaying the reading order).
  results.push({ file, ms, cpuMs, pages: r.pagesProcessed, text: j.pages.map((p: any) => p.text).join("\n\n"), engine: j.engine, json: job.withPages ? j.pages : undefined });
  if (out && !job.keepDir) await Bun.file(out).delete?.();
  n++;
}
console.log(JSON.stringify({ initMs, results, maxRssKb: process.resourceUsage().maxRSS }));
