// The operation catalogue: every operation's options schema (with its defaults), input rule,
// job kind, credit rule and result kind, defined once. POST /jobs validation, credit
// reservation, GET /operations, the OpenAPI document and the executors' types
// (`OptionsOf<Op>`, `ResultOf<Op>`) all derive from here.
import { type Static, type TObject, type TOptional, type TSchema, Type as T } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { defaultOcrLanguages, modelLanguages, ocrLanguageInstallHint, ocrLanguages } from "./ocr-languages";
import { refusalHints } from "./schema-check";

export type JobKind = "ocr" | "convert" | "compress" | "merge" | "split" | "page_ops" | "protect" | "unlock" | "redact";
export type InputKind = "pdf" | "docx" | "xlsx" | "csv" | "jpeg" | "png" | "webp";

const pageIndexes = (description: string) =>
  T.Array(T.Integer({ minimum: 0 }), { maxItems: 10000, uniqueItems: true, description });
const strict = { additionalProperties: false } as const;
/** A language code of ocr and searchable_pdf; refused codes are told how to install them. */
const ocrLanguageCode = () => {
  const schema = T.Union(ocrLanguages.map((c) => T.Literal(c)));
  refusalHints.set(schema, (v) => ocrLanguageInstallHint(String(v)));
  return schema;
};

/** ocr and searchable_pdf: an extension (not in the spec), marked x-extension. */
const ocrLanguagesOption = () =>
  T.Optional(
    T.Array(ocrLanguageCode(), {
      minItems: 1,
      maxItems: ocrLanguages.length,
      uniqueItems: true,
      "x-extension": true,
      description:
        `Extension. Tesseract-style language codes of the text, e.g. ["jpn"], ["eng", "deu"] or ["rus"]; one of ${ocrLanguages.join(", ")}. ` +
        `${modelLanguages.join(", ")} are read by this service's own recognisers; the others by Tesseract with the traineddata installed on this deployment (apt-get install tesseract-ocr-<code> adds one). ` +
        `Default (absent): ${defaultOcrLanguages.join(", ")} (Latin script and simplified Chinese), and each page whose detected script is another is read by the recogniser of that script. See docs/ocr.md.`,
    }),
  );

/** ocr (output searchable_pdf) and searchable_pdf: an extension, marked x-extension. */
const pdfaOption = () =>
  T.Optional(
    T.Literal("2b", {
      "x-extension": true,
      description:
        'Extension. "2b": write the searchable PDF as PDF/A-2b (sRGB output intent, XMP metadata, every font embedded, no encryption). A document with what PDF/A-2b forbids that the service does not convert (a font that is not embedded, JavaScript, embedded files, ...) fails with conversion_failed, naming it. Only with output searchable_pdf. See docs/ocr.md.',
    }),
  );

/** ocr (output searchable_pdf) and searchable_pdf: extensions, marked x-extension. The pages
 * OCR read are turned upright / drawn straight in the PDF itself (docs/ocr.md, "Upright and
 * straight pages"). */
const rotatePagesOption = () =>
  withDefault(
    T.Boolean({
      "x-extension": true,
      description:
        "Extension. Default true: a page OCR found turned (its text_rotation) gets the /Rotate that shows it upright; its text layer stays on its words. false: pages keep their orientation. Only with output searchable_pdf. See docs/ocr.md.",
    }),
    true,
  );
const deskewOption = () =>
  withDefault(
    T.Boolean({
      "x-extension": true,
      description:
        "Extension. Default false. true: a page OCR found skewed by 0.1 to 15 degrees is drawn straight (its scan turned, not resampled, within the same page box; corners outside it are cut off), with its text layer. Only with output searchable_pdf. See docs/ocr.md.",
    }),
    false,
  );

/** An optional option whose absence means `value`: the schema carries it as `default` (its
 * description says it too; the published documents leave the keyword out, publishedOptionsSchema),
 * `withDefaults` fills it in, `OptionsOf` types it as present. */
function withDefault<S extends TSchema>(schema: S, value: Static<S>): TOptional<S & { default: Static<S> }> {
  return T.Optional(Object.assign(schema, { default: value })) as TOptional<S & { default: Static<S> }>;
}

/** What a job of the operation produces: a file to download, or JSON (ocr blocks). */
export type ResultKind = "file" | "json";

export interface OperationDefinition {
  name: string;
  kind: JobKind;
  /** Credits per processed page in live mode; 0 = free. */
  creditsPerPage: number;
  /** "single" = `file_id`; "many" = `file_ids` (merge). */
  inputs: "single" | "many";
  /** Input document kinds accepted. For convert, see `convertPairs`. */
  accepts: readonly InputKind[];
  options: TObject;
  /** What the executor may produce (`ResultOf<Op>`). */
  produces: readonly ResultKind[];
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

/** Which convert options apply to which target; others are rejected with invalid_options. The
 * executor of a target hands these (and only these) to the engine (`convertOptionsFor`). */
export const convertOptionsByTarget = {
  jpg: ["dpi", "quality", "pages"],
  docx: ["pages"],
  pdf: [],
  csv: ["sheet", "delimiter"],
  xlsx: ["delimiter", "sheet_name", "has_header"],
} as const satisfies Record<ConvertTarget, readonly Exclude<keyof RequestOptionsOf<"convert">, "target">[]>;

/** ocr options that apply only to output searchable_pdf; with another output they are refused
 * with invalid_options. */
export const ocrSearchablePdfOptions = ["pdfa", "rotate_pages", "deskew"] as const;

const catalogue = {
  ocr: {
    name: "ocr" as const,
    available: true,
    kind: "ocr",
    creditsPerPage: 3,
    inputs: "single",
    produces: ["json", "file"],
    accepts: ["pdf", "jpeg", "png", "webp"],
    summary: "Recognise text: OCR blocks as JSON, a searchable PDF, or (extensions) hOCR or ALTO.",
    options: T.Object(
      {
        mode: withDefault(
          T.Union([T.Literal("gundam"), T.Literal("base")], {
            description: "gundam = single page, base = multi-page (default base)",
          }),
          "base",
        ),
        output: withDefault(
          T.Union(
            [
              T.Literal("blocks"),
              T.Literal("searchable_pdf"),
              T.Literal("hocr", { "x-extension": true, description: "Extension: an hOCR 1.2 file." }),
              T.Literal("alto", { "x-extension": true, description: "Extension: an ALTO 4 XML file." }),
            ],
            {
              description:
                "default blocks (JSON); searchable_pdf: a PDF; hocr and alto (extensions): the same recognition as an hOCR 1.2 (XHTML) or ALTO 4.3 (XML) file. See docs/ocr.md.",
            },
          ),
          "blocks",
        ),
        pages: T.Optional(pageIndexes("0-based page indexes; default all pages")),
        languages: ocrLanguagesOption(),
        pdfa: pdfaOption(),
        rotate_pages: rotatePagesOption(),
        deskew: deskewOption(),
      },
      strict,
    ),
  },
  searchable_pdf: {
    name: "searchable_pdf" as const,
    available: true,
    kind: "ocr",
    creditsPerPage: 3,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf", "jpeg", "png", "webp"],
    summary: "Add an invisible OCR text layer to a scanned PDF or image (optionally PDF/A-2b).",
    options: T.Object(
      {
        mode: withDefault(T.Union([T.Literal("gundam"), T.Literal("base")]), "base"),
        pages: T.Optional(pageIndexes("0-based page indexes; default all pages")),
        languages: ocrLanguagesOption(),
        pdfa: pdfaOption(),
        rotate_pages: rotatePagesOption(),
        deskew: deskewOption(),
      },
      strict,
    ),
  },
  convert: {
    name: "convert" as const,
    available: true,
    kind: "convert",
    creditsPerPage: 1,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf", "docx", "xlsx", "csv"],
    summary: "Convert: pdf->docx, pdf->jpg, docx->pdf, xlsx->csv, csv->xlsx.",
    options: T.Object(
      {
        target: T.Union([T.Literal("docx"), T.Literal("jpg"), T.Literal("pdf"), T.Literal("csv"), T.Literal("xlsx")]),
        dpi: T.Optional(T.Integer({ minimum: 36, maximum: 600, description: "jpg only; default 150" })),
        quality: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "jpg only; default 85" })),
        pages: T.Optional(pageIndexes("jpg and docx: 0-based page indexes; default all")),
        sheet: T.Optional(
          T.Union([T.Integer({ minimum: 0 }), T.String({ minLength: 1, maxLength: 31 })], {
            description: "csv: sheet index (0-based) or name; default the first sheet",
          }),
        ),
        delimiter: T.Optional(
          T.String({ minLength: 1, maxLength: 1, description: "csv: default ','; xlsx: sniffed when absent" }),
        ),
        sheet_name: T.Optional(T.String({ minLength: 1, maxLength: 31, description: "xlsx: default 'Sheet1'" })),
        has_header: T.Optional(
          T.Boolean({ description: "xlsx: first row is a header (styled, frozen); default false" }),
        ),
      },
      strict,
    ),
  },
  compress: {
    name: "compress" as const,
    available: true,
    kind: "compress",
    creditsPerPage: 1,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Make a PDF smaller: light (lossless), balanced, strong.",
    options: T.Object(
      {
        level: withDefault(
          T.Union([T.Literal("light"), T.Literal("balanced"), T.Literal("strong")], {
            description: "default balanced",
          }),
          "balanced",
        ),
      },
      strict,
    ),
  },
  merge: {
    name: "merge" as const,
    available: true,
    kind: "merge",
    creditsPerPage: 0,
    inputs: "many",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Merge 2 to 50 PDFs in the given order.",
    options: T.Object({}, strict),
  },
  split: {
    name: "split" as const,
    available: true,
    kind: "split",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Split a PDF into a ZIP of PDFs.",
    options: T.Object(
      {
        mode: withDefault(
          T.Union([T.Literal("every_page"), T.Literal("ranges"), T.Literal("chunks")], {
            description: "default every_page",
          }),
          "every_page",
        ),
        ranges: T.Optional(
          T.Array(T.Tuple([T.Integer({ minimum: 1 }), T.Integer({ minimum: 1 })]), {
            minItems: 1,
            maxItems: 1000,
            description: "1-based inclusive [start, end] pairs; mode ranges",
          }),
        ),
        chunk_size: T.Optional(T.Integer({ minimum: 1, description: "pages per part; mode chunks" })),
      },
      strict,
    ),
  },
  rotate: {
    name: "rotate" as const,
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
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
    name: "reorder" as const,
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Reorder pages by a full permutation.",
    options: T.Object(
      {
        order: T.Array(T.Integer({ minimum: 0 }), {
          minItems: 1,
          maxItems: 10000,
          description: "a full permutation of the 0-based page indexes",
        }),
      },
      strict,
    ),
  },
  delete_pages: {
    name: "delete_pages" as const,
    available: true,
    kind: "page_ops",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Delete pages (not all of them).",
    options: T.Object(
      {
        pages: T.Array(T.Integer({ minimum: 0 }), {
          minItems: 1,
          maxItems: 10000,
          uniqueItems: true,
          description: "0-based page indexes",
        }),
      },
      strict,
    ),
  },
  protect: {
    name: "protect" as const,
    available: true,
    kind: "protect",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
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
    name: "unlock" as const,
    available: true,
    kind: "unlock",
    creditsPerPage: 0,
    inputs: "single",
    produces: ["file"],
    accepts: ["pdf"],
    summary: "Remove a PDF's encryption.",
    options: T.Object(
      {
        password: T.Optional(T.String({ maxLength: 127, description: "required when the file has an open password" })),
      },
      strict,
    ),
  },
  redact: {
    name: "redact" as const,
    available: true,
    kind: "redact",
    creditsPerPage: 1,
    inputs: "single",
    produces: ["file"],
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
} satisfies Record<string, OperationDefinition>;

/** The operations offered (GET /operations; the executors map has one for each). */
export type OperationName = keyof typeof catalogue;
type OptionsSchemaOf<Op extends OperationName> = (typeof catalogue)[Op]["options"];

/** The catalogue: each entry an OperationDefinition whose `options` keep their schema's type. */
export const operations: {
  [Op in OperationName]: Omit<OperationDefinition, "name" | "options" | "produces"> & (typeof catalogue)[Op];
} = catalogue;
/** The options of a POST /jobs request for the operation, as the client sent them (and as stored and echoed). */
export type RequestOptionsOf<Op extends OperationName> = Static<OptionsSchemaOf<Op>>;
type DefaultedKeys<S extends TObject> = {
  [K in keyof S["properties"]]: S["properties"][K] extends { default: unknown } ? K : never;
}[keyof S["properties"]];
/** The options an executor runs with: the request's, with every schema default filled in (`withDefaults`). */
export type OptionsOf<Op extends OperationName> = Omit<RequestOptionsOf<Op>, DefaultedKeys<OptionsSchemaOf<Op>>> &
  Required<Pick<RequestOptionsOf<Op>, DefaultedKeys<OptionsSchemaOf<Op>> & keyof RequestOptionsOf<Op>>>;
/** What a job of the operation stores as its result before storage: a file in the work directory, or JSON. */
export type ResultOf<Op extends OperationName> = Extract<
  ProducedResult,
  { type: (typeof catalogue)[Op]["produces"][number] }
>;
export type ProducedResult =
  | { type: "file"; path: string; filename: string; content_type: string; note?: string }
  | { type: "json"; json: unknown };
export type FileResult = Extract<ProducedResult, { type: "file" }>;
export type JsonResult = Extract<ProducedResult, { type: "json" }>;

/** The convert options of one target (`convertOptionsByTarget`). */
export type ConvertOptionsFor<T extends ConvertTarget> = Pick<
  OptionsOf<"convert">,
  (typeof convertOptionsByTarget)[T][number]
>;

/** The options of a convert job that apply to its target, without `target` itself. */
export function convertOptionsFor<T extends ConvertTarget>(
  target: T,
  options: OptionsOf<"convert">,
): ConvertOptionsFor<T> {
  const names: readonly string[] = convertOptionsByTarget[target];
  return Object.fromEntries(Object.entries(options).filter(([name]) => names.includes(name))) as ConvertOptionsFor<T>;
}

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(operations, name);
}

/** The catalogue entry of an operation name from a request or a row; undefined for unknown names. */
export function operationNamed(name: string): OperationDefinition | undefined {
  return isOperationName(name) ? operations[name] : undefined;
}

/** The one place defaults are applied: the options with every absent defaulted field filled in from the schema. */
export function withDefaults<Op extends OperationName>(operation: Op, options: RequestOptionsOf<Op>): OptionsOf<Op> {
  return Value.Default(operations[operation].options, structuredClone(options)) as OptionsOf<Op>;
}

/**
 * An operation's options schema as GET /operations and the OpenAPI document publish it: plain
 * JSON without the `default` keywords (the descriptions say each default). The documents, and
 * the client types generated from them, stay as they were: openapi-typescript would turn a
 * field with a default into a required one.
 */
export function publishedOptionsSchema(operation: OperationDefinition): Record<string, unknown> {
  return JSON.parse(JSON.stringify(operation.options, (key, value) => (key === "default" ? undefined : value)));
}

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
