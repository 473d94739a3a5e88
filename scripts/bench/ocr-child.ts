// Child process of the OCR suites (ocr, ocr-eval, ocr-lang): our OCR over the files given in
// argv[2] (JSON: { threads, output, files[], languages?[], machineLock?, keepDir?, withPages?,
// detMaxSide? }; languages[i] is the `languages` option for files[i]), one after another, as a
// worker process does. It prints { initMs, runtime, results } as JSON on stdout (its peak RSS is
// read by the parent through /usr/bin/time: a process's own maxrss starts from its parent's).
//
// Marks on stderr, read by the parent (ocr-speed.ts) against its own clock, the same way it reads
// Tesseract's "Page N : file" lines: `ocr-child: ready` once the addon and the models are loaded,
// `ocr-child: page N` as page N starts. The parent times the whole process (spawn to exit), its
// load (spawn to the first page mark, right after `ready`) and each page (one mark to the next,
// the last one to the exit, so the output written at the end counts in the last page, as
// Tesseract's teardown does).
// The engine's comparison switches (OCR_OPENVINO, ...) from the environment, before the engine loads.
import "./engine-switches";
import { engine } from "../../src/engine/native";
import { ocrPaths } from "../../src/worker/operations/ocr";
import { readFileSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { tmpdir } from "node:os";

const job = JSON.parse(process.argv[2]!) as {
  threads: number;
  output: "blocks" | "searchable_pdf";
  files: string[];
  languages?: (string[] | null)[];
  machineLock?: string;
  keepDir?: string;
  withPages?: boolean;
  detMaxSide?: number;
};
/** Synchronous, so the mark leaves the process when the page starts, not when the event loop turns. */
const mark = (s: string) => writeSync(2, `ocr-child: ${s}\n`);
const e = engine();
const t0 = performance.now();
await e.ocrInit({
  ...ocrPaths(),
  intra_threads: job.threads,
  machine_lock: job.machineLock,
  det_max_side: job.detMaxSide,
});
const initMs = performance.now() - t0;
// Which runtime the recogniser runs on: the engine prefers ONNX Runtime with OpenVINO where it is
// installed and the CPU has bfloat16 (AVX512_BF16), or OCR_OPENVINO=1 (float32 without it); OCR_OPENVINO=0 never;
// the libraries mapped into this process say which one loaded.
const runtime = /libopenvino/.test(readFileSync("/proc/self/maps", "utf8")) ? "openvino" : "onnxruntime";
mark("ready");
const results: {
  file: string;
  ms: number;
  cpuMs: number;
  pages: number;
  text: string;
  engine: string;
  json?: unknown;
}[] = [];
for (const [n, file] of job.files.entries()) {
  mark(`page ${n}`);
  // keepDir: the searchable PDFs are kept there (the OCRmyPDF comparison reads them back).
  const out =
    job.output !== "searchable_pdf"
      ? null
      : job.keepDir
        ? join(job.keepDir, basename(file))
        : join(tmpdir(), `ocr-bench-${process.pid}-${n}.pdf`);
  const t = performance.now();
  const c = process.cpuUsage();
  const languages = job.languages?.[n] ?? undefined;
  const r = await e.ocr(file, out, { output: job.output, languages });
  const ms = performance.now() - t;
  const cu = process.cpuUsage(c);
  const j = JSON.parse(r.json);
  // withPages: the JSON pages too (lines and their boxes, for replaying the reading order).
  results.push({
    file,
    ms,
    cpuMs: (cu.user + cu.system) / 1000,
    pages: r.pages_processed,
    text: j.pages.map((p: any) => p.text).join("\n\n"),
    engine: j.engine,
    json: job.withPages ? j.pages : undefined,
  });
  if (out && !job.keepDir) await Bun.file(out).delete?.();
}
console.log(JSON.stringify({ initMs, runtime, results }));
