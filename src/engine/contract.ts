// The engine's options and results as TypeScript sees them. The addon (crates/engine-node) hands
// an options object to the engine's own options struct by serde, and returns the engine's result
// struct serialized, both under the API's snake_case names; each export names its types here
// (`ts_args_type`, `ts_return_type`), so the generated native/index.d.ts checks every call.
// An operation's options are its POST /jobs options (`OptionsOf<Op>`) as they are: the engine
// struct refuses a field it does not take (`invalid_options`), and test/engine/contract.test.ts
// runs every schema option of every operation through the addon, and compares each result with
// its type here.
import type { ConvertOptionsFor, OptionsOf } from "../domain/operations";
import type { EngineErrorCode } from "./errors";

export type RotateOptions = OptionsOf<"rotate">;
export type ReorderOptions = OptionsOf<"reorder">;
export type DeletePagesOptions = OptionsOf<"delete_pages">;
export type SplitOptions = OptionsOf<"split">;
export type ProtectOptions = OptionsOf<"protect">;
export type UnlockOptions = OptionsOf<"unlock">;
export type RedactOptions = OptionsOf<"redact">;
export type CompressOptions = OptionsOf<"compress">;
/** convert pdf -> jpg; `threads`: render threads of this call (default the cores, at most 8). */
export type RenderOptions = ConvertOptionsFor<"jpg"> & { threads?: number };
export type XlsxToCsvOptions = ConvertOptionsFor<"csv">;
export type CsvToXlsxOptions = ConvertOptionsFor<"xlsx">;
/** convert pdf -> docx; `ocr`: OCR pages without a usable text layer (needs `ocrInit`). */
export type PdfToDocxOptions = ConvertOptionsFor<"docx"> & { ocr?: boolean };

type OcrJobOptions = OptionsOf<"ocr"> | OptionsOf<"searchable_pdf">;
/** ocr and searchable_pdf: the job's options but `mode` (which selects `pages`) and `output`
 * (hOCR and ALTO are blocks rendered by the service), each optional; `page_timeout_s`: seconds
 * a page may take in Tesseract (default 120). */
export type OcrOptions = Partial<Omit<OcrJobOptions, "mode" | "output">> & {
  output?: "blocks" | "searchable_pdf";
  page_timeout_s?: number;
};
/** Where ONNX Runtime, the models and Tesseract's data are (engine::ocr::pipeline::OcrInit). */
export interface OcrInitOptions {
  ort_library: string;
  manifest: string;
  model_root: string;
  /** ONNX Runtime intra-op threads per model; default 1. */
  intra_threads?: number;
  det_max_side?: number;
  /** A file every process on the machine locks around each model run. */
  machine_lock?: string;
  tessdata?: string;
}

export type DocumentKind = "pdf" | "docx" | "xlsx" | "csv" | "jpeg" | "png" | "webp" | "unknown";
/** What `identify` found (engine::Identification). */
export interface Identification {
  kind: DocumentKind;
  page_count: number | null;
  encrypted: boolean;
  /** A password is needed to open the file (PDF user password, Office encryption). */
  password_required: boolean;
  /** The kind is recognised but the file is unusable. */
  error?: EngineErrorCode;
}

/** rotate, reorder, delete_pages, merge, protect, unlock, redact (engine::PageOpResult). */
export interface PageOpResult {
  /** Input pages read (sum over the inputs for merge; pages rebuilt for redact). */
  pages_processed: number;
  /** Pages in the output. */
  page_count: number;
  output_bytes: number;
}
export interface SplitResult {
  parts: number;
  pages_processed: number;
  output_bytes: number;
}
export interface RenderResult {
  pages_processed: number;
  page_count: number;
  /** True: the output is a ZIP of page-NNNN.jpg; false: a single JPEG. */
  zip: boolean;
  grey_pages: number;
  output_bytes: number;
}
export interface CompressResult {
  page_count: number;
  input_bytes: number;
  output_bytes: number;
  /** Compression did not make the file smaller: the output is a copy of the input. */
  kept_original: boolean;
  /** How the output was made; the last two after the content guard saw a loss. */
  path: "lossless" | "images" | "own_image_pass_only" | "lossless_fallback";
}
export interface XlsxToCsvResult {
  sheet_name: string;
  sheet_index: number;
  sheet_count: number;
  rows: number;
  columns: number;
}
export interface CsvToXlsxResult {
  delimiter: string;
  rows: number;
  columns: number;
  numbers: number;
  dates: number;
  texts: number;
}
export interface PdfToDocxResult {
  pages_processed: number;
  page_count: number;
  paragraphs: number;
  images: number;
  images_skipped: number;
  tables: number;
  /** 0-based indexes of converted pages without a text layer (scans). */
  pages_without_text: number[];
  /** Those of them that were OCRed. */
  pages_ocred: number[];
  /** 0-based indexes of converted pages whose text layer looks unmapped in part. */
  pages_unmapped_text: number[];
  /** Lines of those pages whose text the recognised words replaced. */
  lines_recognised: number;
  output_bytes: number;
}
export interface OcrResult {
  page_count: number;
  /** Pages returned (recognised, or read from their text layer). */
  pages_processed: number;
  /** The blocks JSON (`{engine, unit, origin, pages}`; docs/ocr.md). */
  json: string;
  /** Bytes of the searchable PDF; 0 for blocks. */
  output_bytes: number;
}
