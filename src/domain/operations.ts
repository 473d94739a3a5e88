// The operation catalogue: every operation's options schema, input rule, job kind and credit
// rule, defined once. POST /jobs validation, credit reservation, GET /operations and the
// OpenAPI document all read from here.
import { Type as T, type TSchema } from "@sinclair/typebox";
import { defaultOcrLanguages, ocrLanguages } from "./ocr-languages";

export type JobKind = "ocr" | "convert" | "compress" | "merge" | "split" | "page_ops" | "protect" | "unlock" | "redact";
export type InputKind = "pdf" | "docx" | "xlsx" | "csv" | "jpeg" | "png" | "webp";

const pageIndexes = (description: string) =>
  T.Array(T.Integer({ minimum: 0 }), { maxItems: 10000, uniqueItems: true, description });
const strict = { additionalProperties: false } as const;
/** ocr and searchable_pdf: an extension (not in the spec), marked x-extension. */
const ocrLanguagesOption = () =>
  T.Optional(
    T.Array(T.Union(ocrLanguages.map((c) => T.Literal(c))), {
      minItems: 1,
      maxItems: ocrLanguages.length,
      uniqueItems: true,
      "x-extension": true,
      description:
        `Extension. Tesseract-style language codes of the text, e.g. ["jpn"] or ["eng", "deu"]; one of ${ocrLanguages.join(", ")}. ` +
        `Default (absent): ${defaultOcrLanguages.join(", ")} (Latin script and simplified Chinese). Chooses the recognition model; see docs/ocr.md.`,
    }),
  );

export interface OperationDefinition {
  name: string;
  kind: JobKind;
  /** Credits per processed page in live mode; 0 = free. */
  creditsPerPage: number;
  /** "single" = `file_id`; "many" = `file_ids` (merge). */
  inputs: "single" | "many";
  /** Input document kinds accepted. For convert, see `convertPairs`. */
  accepts: InputKind[];
  options: TSchema;
  summary: string;
  /**
   * False while this deployment has no executor for the operation: POST /jobs then answers
   * operation_unsupported with `unavailableReason` instead of accepting work it cannot do.
   */
  available: boolean;
  unavailableReason?: string;
}

export const convertPairs = [
  { from: "pdf", to: "docx", available: true },
  { from: "pdf", to: "jpg", available: true },
  { from: "docx", to: "pdf", available: true },
  { from: "xlsx", to: "csv", available: true },
  { from: "csv", to: "xlsx", available: true },
] as const;
export type ConvertTarget = "docx" | "jpg" | "pdf" | "csv" | "xlsx";

/** Which convert options apply to which target; others are rejected with invalid_options. */
export const convertOptionsByTarget: Record<ConvertTarget, string[]> = {
  jpg: ["dpi", "quality", "pages"],
  docx: ["pages"],
  pdf: [],
  csv: ["sheet", "delimiter"],
  xlsx: ["delimiter", "sheet_name", "has_header"],
};

export const operations: Record<string, OperationDefinition> = {
  ocr: {
    name: "ocr",
    available: true,
    kind: "ocr",
    creditsPerPage: 3,
    inputs: "single",
    accepts: ["pdf", "jpeg", "png", "webp"],
    summary: "Recognise text: OCR blocks as JSON, or a searchable PDF.",
    options: T.Object(
      {
        mode: T.Optional(T.Union([T.Literal("gundam"), T.Literal("base")], { description: "gundam = single page, base = multi-page (default base)" })),
        output: T.Optional(T.Union([T.Literal("blocks"), T.Literal("searchable_pdf")], { description: "default blocks" })),
        pages: T.Optional(pageIndexes("0-based page indexes; default all pages")),
        languages: ocrLanguagesOption(),
      },
      strict,
    ),
  },
  searchable_pdf: {
    name: "searchable_pdf",
    available: true,
    kind: "ocr",
    creditsPerPage: 3,
    inputs: "single",
    accepts: ["pdf", "jpeg", "png", "webp"],
    summary: "Add an invisible OCR text layer to a scanned PDF or image.",
    options: T.Object(
      {
        mode: T.Optional(T.Union([T.Literal("gundam"), T.Literal("base")])),
        pages: T.Optional(pageIndexes("0-based page indexes; default all pages")),
        languages: ocrLanguagesOption(),
      },
      strict,
    ),
  },
  convert: {
    name: "convert",
    available: true,
    kind: "convert",
    creditsPerPage: 1,
    inputs: "single",
    accepts: ["pdf", "docx", "xlsx", "csv"],
    summary: "Convert: pdf->docx, pdf->jpg, docx->pdf, xlsx->csv, csv->xlsx.",
    options: T.Object(
      {
        target: T.Union([T.Literal("docx"), T.Literal("jpg"), T.Literal("pdf"), T.Literal("csv"), T.Literal("xlsx")]),
        dpi: T.Optional(T.Integer({ minimum: 36, maximum: 600, description: "jpg only; default 150" })),
        quality: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "jpg only; default 85" })),
        pages: T.Optional(pageIndexes("jpg and docx: 0-based page indexes; default all")),
        sheet: T.Optional(T.Union([T.Integer({ minimum: 0 }), T.String({ minLength: 1, maxLength: 31 })], { description: "csv: sheet index (0-based) or name; default the first sheet" })),
        delimiter: T.Optional(T.String({ minLength: 1, maxLength: 1, description: "csv: default ','; xlsx: sniffed when absent" })),
        sheet_name: T.Optional(T.String({ minLength: 1, maxLength: 31, description: "xlsx: default 'Sheet1'" })),
        has_header: T.Optional(T.Boolean({ description: "xlsx: first row is a header (styled, frozen); default false" })),
      },
      strict,
    ),
  },
  compress: {
    name: "compress",
    available: true,
    kind: "compress",
    creditsPerPage: 1,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Make a PDF smaller: light (lossless), balanced, strong.",
    options: T.Object(
      { level: T.Optional(T.Union([T.Literal("light"), T.Literal("balanced"), T.Literal("strong")], { description: "default balanced" })) },
      strict,
    ),
  },
  merge: {
    name: "merge",
    available: true,
    kind: "merge",
    creditsPerPage: 0,
    inputs: "many",
    accepts: ["pdf"],
    summary: "Merge 2 to 50 PDFs in the given order.",
    options: T.Object({}, strict),
  },
  split: {
    name: "split",
    available: true,
    kind: "split",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Split a PDF into a ZIP of PDFs.",
    options: T.Object(
      {
        mode: T.Optional(T.Union([T.Literal("every_page"), T.Literal("ranges"), T.Literal("chunks")], { description: "default every_page" })),
        ranges: T.Optional(T.Array(T.Tuple([T.Integer({ minimum: 1 }), T.Integer({ minimum: 1 })]), { minItems: 1, maxItems: 1000, description: "1-based inclusive [start, end] pairs; mode ranges" })),
        chunk_size: T.Optional(T.Integer({ minimum: 1, description: "pages per part; mode chunks" })),
      },
      strict,
    ),
  },
  rotate: {
    name: "rotate",
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Rotate pages clockwise.",
    options: T.Object(
      {
        degrees: T.Union([T.Literal(90), T.Literal(180), T.Literal(270)], { description: "clockwise" }),
        pages: T.Optional(pageIndexes("0-based page indexes; default all pages")),
      },
      strict,
    ),
  },
  reorder: {
    name: "reorder",
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Reorder pages by a full permutation.",
    options: T.Object({ order: T.Array(T.Integer({ minimum: 0 }), { minItems: 1, maxItems: 10000, description: "a full permutation of the 0-based page indexes" }) }, strict),
  },
  delete_pages: {
    name: "delete_pages",
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Delete pages (not all of them).",
    options: T.Object({ pages: T.Array(T.Integer({ minimum: 0 }), { minItems: 1, maxItems: 10000, uniqueItems: true, description: "0-based page indexes" }) }, strict),
  },
  protect: {
    name: "protect",
    available: true,
    kind: "protect",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Encrypt with AES-256, passwords and permissions.",
    options: T.Object(
      {
        user_password: T.Optional(T.String({ minLength: 1, maxLength: 127 })),
        owner_password: T.Optional(T.String({ minLength: 1, maxLength: 127 })),
        allow_print: T.Optional(T.Boolean({ description: "default true" })),
        allow_modify: T.Optional(T.Boolean({ description: "default true" })),
        allow_copy: T.Optional(T.Boolean({ description: "default true" })),
        allow_annotate: T.Optional(T.Boolean({ description: "default true" })),
      },
      strict,
    ),
  },
  unlock: {
    name: "unlock",
    available: true,
    kind: "unlock",
    creditsPerPage: 0,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Remove a PDF's encryption.",
    options: T.Object({ password: T.Optional(T.String({ maxLength: 127, description: "required when the file has an open password" })) }, strict),
  },
  redact: {
    name: "redact",
    available: true,
    kind: "redact",
    creditsPerPage: 1,
    inputs: "single",
    accepts: ["pdf"],
    summary: "Burn in black regions; affected pages are rasterised and rebuilt.",
    options: T.Object(
      {
        regions: T.Array(
          T.Object(
            {
              page: T.Integer({ minimum: 0, description: "0-based page index" }),
              x: T.Number({ minimum: 0, description: "PDF points from the left of the displayed page" }),
              y: T.Number({ minimum: 0, description: "PDF points from the top of the displayed page" }),
              w: T.Number({ exclusiveMinimum: 0 }),
              h: T.Number({ exclusiveMinimum: 0 }),
            },
            strict,
          ),
          { minItems: 1, maxItems: 1000 },
        ),
        dpi: T.Optional(T.Integer({ minimum: 72, maximum: 600, description: "default 150" })),
      },
      strict,
    ),
  },
};

export const unsupportedOperations: Record<string, string> = {
  watermark: "Watermarking is not offered: the service does not alter page content beyond redaction.",
  flatten: "Flattening forms and annotations is not offered yet.",
  sign: "Digital signatures need certificate management, which the service does not offer.",
};

export const unsupportedConvertTargets: Record<string, string> = {
  pptx: "Conversion to PowerPoint is not offered: slide layout cannot be derived reliably from pages.",
  png: "PNG output is not offered: use target jpg for page images.",
  html: "HTML output is not offered: use target docx for editable text.",
  txt: "Plain-text output is not offered: use the ocr operation (blocks) or target docx.",
};

export const operationNames = [...Object.keys(operations), ...Object.keys(unsupportedOperations)];

/** Options that carry secrets: redacted in every job representation, erased once a job ends. */
export const secretOptionNames = ["password", "user_password", "owner_password"];
