// The boundary between the service and the engine, as the tests see it: every operation's
// options with every option of its schema set (handed through the operation's executor to the
// engine, whose structs refuse a field they do not take), a way to run a sample's executor on
// inputs made by the test, and the fields and kinds a result must have to be the type
// src/engine/contract.ts gives it. Used by test/engine/contract.test.ts and, for OCR (whose
// init holds for the whole process), the end of test/engine/ocr.test.ts.
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { type OperationName, operations, withDefaults } from "../../src/domain/operations";
import { engine } from "../../src/engine/native";
import { executors } from "../../src/worker/operations";
import type { ExecutionOutput, InputOnDisk } from "../../src/worker/operations/types";

/** The inputs a sample runs on: named by what the test makes (a PDF, a JPEG, ...). */
export type SampleInput = "pdf" | "pdf2" | "protected" | "xlsx" | "csv" | "jpg";

export interface OptionSample {
  operation: OperationName;
  /** Every option of the schema set (convert: those of one target). */
  options: Record<string, unknown>;
  inputs: SampleInput[];
}

/** One sample per operation (per engine-run target for convert), every option set. */
export const optionSamples: OptionSample[] = [
  { operation: "rotate", options: { degrees: 270, pages: [1] }, inputs: ["pdf"] },
  { operation: "reorder", options: { order: [1, 0] }, inputs: ["pdf"] },
  { operation: "delete_pages", options: { pages: [0] }, inputs: ["pdf"] },
  { operation: "merge", options: {}, inputs: ["pdf", "pdf2"] },
  {
    operation: "split",
    options: {
      mode: "ranges",
      ranges: [
        [2, 2],
        [1, 2],
      ],
    },
    inputs: ["pdf"],
  },
  { operation: "split", options: { mode: "chunks", chunk_size: 1 }, inputs: ["pdf"] },
  {
    operation: "protect",
    options: {
      user_password: "u",
      owner_password: "o",
      allow_print: false,
      allow_modify: false,
      allow_copy: true,
      allow_annotate: false,
    },
    inputs: ["pdf"],
  },
  { operation: "unlock", options: { password: "pw" }, inputs: ["protected"] },
  { operation: "redact", options: { regions: [{ page: 1, x: 10, y: 10, w: 100, h: 40 }], dpi: 72 }, inputs: ["pdf"] },
  { operation: "compress", options: { level: "strong" }, inputs: ["pdf"] },
  { operation: "convert", options: { target: "jpg", dpi: 72, quality: 60, pages: [1] }, inputs: ["pdf"] },
  { operation: "convert", options: { target: "docx", pages: [1] }, inputs: ["pdf"] },
  { operation: "convert", options: { target: "csv", sheet: 0, delimiter: ";" }, inputs: ["xlsx"] },
  {
    operation: "convert",
    options: { target: "xlsx", delimiter: ",", sheet_name: "Fruit", has_header: true },
    inputs: ["csv"],
  },
  {
    operation: "ocr",
    options: {
      mode: "gundam",
      output: "searchable_pdf",
      pages: [0],
      languages: ["eng"],
      pdfa: "2b",
      rotate_pages: false,
      deskew: true,
    },
    inputs: ["jpg"],
  },
  {
    operation: "searchable_pdf",
    options: { mode: "base", pages: [0], languages: ["eng"], pdfa: "2b", rotate_pages: true, deskew: false },
    inputs: ["jpg"],
  },
];

/** The options of the operation's schema that none of its samples sets. */
export function unsetOptions(operation: OperationName): string[] {
  const set = new Set(optionSamples.filter((s) => s.operation === operation).flatMap((s) => Object.keys(s.options)));
  return Object.keys(operations[operation].options.properties).filter((name) => !set.has(name));
}

/** Runs a sample (its options with the schema's defaults, as the worker does) through its
 * operation's executor on `inputs` (path and kind of each). */
export async function runSample(
  sample: OptionSample,
  inputs: { path: string; kind: string }[],
  scratch: string,
): Promise<ExecutionOutput> {
  const onDisk: InputOnDisk[] = inputs.map((input, i) => ({
    id: `file_${i}`,
    path: input.path,
    kind: input.kind,
    page_count: null,
    filename: `input-${i}.${input.kind}`,
  }));
  const op = sample.operation;
  const execute = executors[op] as (input: unknown) => Promise<ExecutionOutput>;
  return execute({
    jobId: `job_${op}`,
    operation: op,
    options: withDefaults(op, sample.options as never),
    inputs: onDisk,
    workDir: mkdtempSync(join(scratch, `${op}-`)),
    control: new (engine().JobControl)(),
    mode: "live",
  });
}

type KindOf<V> = V extends number ? "number" : V extends string ? "string" : V extends boolean ? "boolean" : "object";
/** Each field of T and the `typeof` its value must have: `?` when it may be absent, `| null`
 * when it may be null. A literal of this type lists every field of T and no other. */
export type Shape<T> = {
  [K in keyof T]-?: Partial<Pick<T, K>> extends Pick<T, K>
    ? `${KindOf<NonNullable<T[K]>>}?`
    : null extends T[K]
      ? `${KindOf<NonNullable<T[K]>>} | null`
      : KindOf<T[K]>;
};

/** Where `value` differs from `shape`: fields it has that the type has not, and fields whose
 * value is of another kind (or absent when required). Empty when it is of the type. */
export function shapeMismatches<T>(value: T, shape: Shape<T>): string[] {
  const fields = value as Record<string, unknown>;
  const declared = shape as Record<string, string>;
  const extra = Object.keys(fields)
    .filter((name) => !(name in declared))
    .map((name) => `${name}: not in the type`);
  const wrong = Object.entries(declared).flatMap(([name, kind]) => {
    const v = fields[name];
    const actual = v === null ? "null" : typeof v;
    const base = kind.replace(/\?$/, "").replace(/ \| null$/, "");
    const allowed = [base, kind.endsWith("?") ? "undefined" : null, kind.endsWith("| null") ? "null" : null];
    return allowed.includes(actual) ? [] : [`${name}: ${actual}, not ${kind}`];
  });
  return [...extra, ...wrong];
}
