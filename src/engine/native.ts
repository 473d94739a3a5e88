// The only importer of native/: loads the napi-rs addon and states the interface the rest of
// the service relies on. Only worker and inspector processes import this module.
import { createRequire } from "node:module";
import { join } from "node:path";

export type DocumentKind = "pdf" | "docx" | "xlsx" | "csv" | "jpeg" | "png" | "webp" | "unknown";

export interface Identified {
  kind: DocumentKind;
  pageCount: number | null;
  encrypted: boolean;
  error?: string;
}

export interface PageOpResult {
  pagesProcessed: number;
  pageCount: number;
  outputBytes: number;
}

export interface JobControl {
  cancel(): void;
  readonly cancelled: boolean;
  progress(): { done: number; total: number };
}

export interface NativeEngine {
  JobControl: new () => JobControl;
  identify(path: string): Promise<Identified>;
  rotate(input: string, output: string, opts: { degrees: number; pages?: number[] }, control?: JobControl): Promise<PageOpResult>;
  reorder(input: string, output: string, opts: { order: number[] }, control?: JobControl): Promise<PageOpResult>;
  deletePages(input: string, output: string, opts: { pages: number[] }, control?: JobControl): Promise<PageOpResult>;
  merge(inputs: string[], output: string, control?: JobControl): Promise<PageOpResult>;
  split(input: string, outputZip: string, opts: { mode: string; ranges?: [number, number][]; chunkSize?: number }, control?: JobControl): Promise<PageOpResult & { parts: number }>;
  protect(
    input: string,
    output: string,
    opts: { userPassword?: string; ownerPassword?: string; allowPrint?: boolean; allowModify?: boolean; allowCopy?: boolean; allowAnnotate?: boolean },
    control?: JobControl,
  ): Promise<PageOpResult>;
  unlock(input: string, output: string, opts: { password?: string }, control?: JobControl): Promise<PageOpResult>;
  /** One page -> a JPEG at `output`; several -> a ZIP (stored) of page-NNNN.jpg. */
  renderJpeg(
    input: string,
    output: string,
    opts: { dpi?: number; quality?: number; pages?: number[]; threads?: number; maxPages?: number },
    control?: JobControl,
  ): Promise<{ pagesProcessed: number; pageCount: number; zip: boolean; greyPages: number; outputBytes: number }>;
  redact(input: string, output: string, opts: { regions: { page: number; x: number; y: number; w: number; h: number }[]; dpi?: number; maxPages?: number }, control?: JobControl): Promise<PageOpResult>;
  compress(
    input: string,
    output: string,
    opts: { level?: "light" | "balanced" | "strong"; maxPages?: number },
    control?: JobControl,
  ): Promise<{ pageCount: number; inputBytes: number; outputBytes: number; keptOriginal: boolean; path?: string }>;
  /** Spreadsheets (issue 7; crates/engine/src/sheets): one sheet to RFC 4180 CSV. */
  xlsxToCsv(input: string, output: string, opts: { sheet?: number | string; delimiter?: string }, control?: JobControl): Promise<{ sheetName: string; sheetIndex: number; sheetCount: number; rows: number; columns: number }>;
  /** pdf -> docx from MuPDF's structured text (crates/engine/src/docx.rs). */
  pdfToDocx(input: string, output: string, opts: { pages?: number[]; maxPages?: number; ocr?: boolean }, control?: JobControl): Promise<{ pagesProcessed: number; pageCount: number; paragraphs: number; images: number; imagesSkipped: number; tables: number; pagesWithoutText: number[]; pagesOcred: number[]; outputBytes: number }>;
  /** CSV to a one-sheet workbook with typed cells. */
  csvToXlsx(input: string, output: string, opts: { delimiter?: string; hasHeader?: boolean; sheetName?: string }, control?: JobControl): Promise<{ delimiter: string; rows: number; columns: number; numbers: number; dates: number; texts: number }>;
  /** OCR (issue 6; crates/engine/src/ocr_pipeline.rs over crates/ocr): load ONNX Runtime and the models once per process. */
  ocrInit(opts: { ortLibrary: string; manifest: string; modelRoot: string; intraThreads?: number; detMaxSide?: number; machineLock?: string }): Promise<void>;
  /** OCR a PDF or image: `json` is the blocks document (see docs/ocr.md); searchable_pdf also writes `output`. */
  ocr(
    input: string,
    output: string | null,
    opts: { output: "blocks" | "searchable_pdf"; pages?: number[]; maxPages?: number; languages?: string[] },
    control?: JobControl,
  ): Promise<{ pageCount: number; pagesProcessed: number; json: string; outputBytes: number }>;
}

let loaded: NativeEngine | null = null;

export function engine(): NativeEngine {
  if (!loaded) {
    const require = createRequire(import.meta.url);
    loaded = require(join(import.meta.dir, "../../native/index.js")) as NativeEngine;
  }
  return loaded;
}

/** Engine errors carry a stable code (see crates/engine/src/error.rs). */
export function engineErrorCode(e: unknown): string {
  const err = e as { code?: string; message?: string };
  if (err && typeof err.code === "string" && /^[a-z_]+$/.test(err.code)) return err.code;
  const m = /^([a-z_]+):/.exec(err?.message ?? "");
  return m ? m[1]! : "engine_error";
}
