// Rule: the engine's own option and result structs are the only definition of the boundary
// (serde, the API's snake_case names; crates/engine-node restates none). Every option of every
// operation's schema reaches the engine through the operation's executor, and the engine refuses
// a field its struct does not take rather than dropping it; every result of the addon has the
// fields, and kinds, its type in src/engine/contract.ts declares. Runs on inputs made here; OCR's
// operations are checked at the end of ocr.test.ts (the OCR init holds for the whole process).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { convertOptionsByTarget, type OperationName, operations } from "../../src/domain/operations";
import type {
  CompressResult,
  CsvToXlsxResult,
  Identification,
  PageOpResult,
  PdfToDocxResult,
  RenderResult,
  SplitResult,
  XlsxToCsvResult,
} from "../../src/engine/contract";
import { engine } from "../../src/engine/native";
import {
  type OptionSample,
  optionSamples,
  runSample,
  type SampleInput,
  type Shape,
  shapeMismatches,
  unsetOptions,
} from "../support/boundary";
import { minimalPdf, pngHeader } from "../support/pdf";

const dir = mkdtempSync(join(tmpdir(), "engine-contract-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
const write = (name: string, bytes: Uint8Array | string) => {
  writeFileSync(at(name), bytes);
  return at(name);
};
// Labels long enough for a text layer (16 characters a page): pdf -> docx then runs no OCR,
// whose init, held for the whole process, ocr.test.ts checks the absence of.
const pdf = write("two.pdf", minimalPdf(2, "Contract boundary"));
const csv = write("fruit.csv", "name,qty\napple,3\npear,5\n");

/** The non-OCR inputs of the samples, made with the engine itself where they need it. */
async function inputsOf(sample: OptionSample): Promise<{ path: string; kind: string }[]> {
  const made: Record<Exclude<SampleInput, "jpg">, () => Promise<{ path: string; kind: string }>> = {
    pdf: async () => ({ path: pdf, kind: "pdf" }),
    pdf2: async () => ({ path: write("three.pdf", minimalPdf(3, "Another boundary")), kind: "pdf" }),
    protected: async () => {
      await engine().protect(pdf, at("protected.pdf"), { user_password: "pw" });
      return { path: at("protected.pdf"), kind: "pdf" };
    },
    xlsx: async () => {
      await engine().csvToXlsx(csv, at("fruit.xlsx"), {});
      return { path: at("fruit.xlsx"), kind: "xlsx" };
    },
    csv: async () => ({ path: csv, kind: "csv" }),
  };
  return Promise.all(sample.inputs.map((name) => made[name as Exclude<SampleInput, "jpg">]()));
}

const engineSamples = optionSamples.filter((s) => s.operation !== "ocr" && s.operation !== "searchable_pdf");

describe("every option of every operation reaches the engine", () => {
  test("the samples set every option of every schema, each sample valid for its schema", () => {
    for (const op of Object.keys(operations) as OperationName[]) expect([op, ...unsetOptions(op)]).toEqual([op]);
    for (const s of optionSamples) expect(Value.Check(operations[s.operation].options, s.options)).toBe(true);
    // convert: each sample sets exactly the options of its target (all of them), and every
    // target the engine runs has one; docx -> pdf (LibreOffice) takes none.
    const convert = optionSamples.filter((s) => s.operation === "convert");
    for (const { options } of convert) {
      const { target, ...rest } = options as { target: keyof typeof convertOptionsByTarget };
      expect(Object.keys(rest).sort()).toEqual([...convertOptionsByTarget[target]].sort());
    }
    const targets = convert.map((s) => s.options.target).sort();
    expect(targets).toEqual(
      Object.keys(convertOptionsByTarget)
        .filter((t) => t !== "pdf")
        .sort(),
    );
  });

  for (const sample of engineSamples) {
    const name = `${sample.operation}${sample.operation === "convert" ? ` to ${sample.options.target}` : ""}`;
    test(`${name}: the executor hands every option to the engine, which takes it`, async () => {
      const out = await runSample(sample, await inputsOf(sample), dir);
      expect(out.pages_processed).toBeGreaterThan(0);
      expect(out.result.type).toBe("file");
    });
  }

  test("an option the engine's struct does not take is refused with invalid_options, naming it", async () => {
    const rotate = { operation: "rotate" as const, options: { degrees: 90, margin: 5 }, inputs: ["pdf" as const] };
    const e = await runSample(rotate, await inputsOf(rotate), dir).catch((e) => e);
    expect(e.code).toBe("invalid_options");
    expect(e.message).toContain("margin");
    // Under another convention than the API's, a name is unknown too.
    const split = engine().split(pdf, at("s.zip"), { mode: "chunks", chunkSize: 1 } as never);
    expect(await split.catch((e) => e.code)).toBe("invalid_options");
  });

  test("values the engine cannot take reject with invalid_options naming the field, as refusals do", async () => {
    // Each call is made when its turn comes: a rejection that no handler awaits yet would be
    // reported as unhandled (a refused deserialization rejects at once).
    const cases: [() => Promise<unknown>, string][] = [
      [() => engine().rotate(pdf, at("r.pdf"), { degrees: 90, pages: [-1] }), "page"],
      [() => engine().rotate(pdf, at("r.pdf"), { degrees: 90, pages: [0.5] }), "options.pages[0]"],
      [() => engine().rotate(pdf, at("r.pdf"), { degrees: "90" } as never), "options.degrees"],
      [() => engine().rotate(pdf, at("r.pdf"), null as never), "degrees"],
      [() => engine().renderJpeg(pdf, at("r.jpg"), { dpi: -72 }), "options.dpi"],
      [
        () => engine().redact(pdf, at("r.pdf"), { regions: [{ page: 0, x: 0, y: 0, w: 1, h: "1" }] } as never),
        "regions[0].h",
      ],
      [() => engine().xlsxToCsv(at("fruit.xlsx"), at("r.csv"), { delimiter: ";;" }), "options.delimiter"],
      [() => engine().compress(pdf, at("r.pdf"), { level: "max" } as never), "options.level"],
    ];
    for (const [call, field] of cases) {
      const e = await call().then(
        () => ({ code: "resolved", message: "" }),
        (e) => e,
      );
      expect([e.code, e.message.includes(field)]).toEqual(["invalid_options", true]);
    }
  });
});

describe("every result has the fields and kinds of its type", () => {
  const pageOp: Shape<PageOpResult> = { pages_processed: "number", page_count: "number", output_bytes: "number" };

  test("identify", async () => {
    const shape: Shape<Identification> = {
      kind: "string",
      page_count: "number | null",
      encrypted: "boolean",
      password_required: "boolean",
      error: "string?",
    };
    const found = await engine().identify(pdf);
    expect(found).toEqual({ kind: "pdf", page_count: 2, encrypted: false, password_required: false });
    expect(shapeMismatches(found, shape)).toEqual([]);
    const png = await engine().identify(write("header.png", pngHeader()));
    expect(shapeMismatches(png, shape)).toEqual([]);
    const broken = await engine().identify(write("broken.pdf", "%PDF-1.7\n%%EOF\n"));
    expect(broken).toMatchObject({ kind: "pdf", page_count: null, error: "invalid_pdf" });
    expect(shapeMismatches(broken, shape)).toEqual([]);
  });

  test("the page operations", async () => {
    const regions = [{ page: 0, x: 0, y: 0, w: 9, h: 9 }];
    expect(await engine().redactBurn(pdf, at("burnt.bin"), { regions })).toBe(1);
    const results = [
      await engine().rotate(pdf, at("rot.pdf"), { degrees: 90 }),
      await engine().reorder(pdf, at("re.pdf"), { order: [1, 0] }),
      await engine().deletePages(pdf, at("del.pdf"), { pages: [1] }),
      await engine().merge([pdf, pdf], at("merged.pdf")),
      await engine().protect(pdf, at("p.pdf"), { user_password: "pw" }),
      await engine().unlock(at("p.pdf"), at("u.pdf"), { password: "pw" }),
      await engine().redact(pdf, at("red.pdf"), { regions }),
      await engine().redactAssemble(pdf, at("red2.pdf"), { regions }, [at("burnt.bin")]),
    ];
    for (const r of results) expect(shapeMismatches(r, pageOp)).toEqual([]);
    expect(results[3]).toMatchObject({ pages_processed: 4, page_count: 4 });
    const split: Shape<SplitResult> = { parts: "number", pages_processed: "number", output_bytes: "number" };
    expect(shapeMismatches(await engine().split(pdf, at("s.zip"), { mode: "every_page" }), split)).toEqual([]);
  });

  test("render, its join, compress", async () => {
    const render: Shape<RenderResult> = {
      pages_processed: "number",
      page_count: "number",
      zip: "boolean",
      grey_pages: "number",
      output_bytes: "number",
    };
    const four = write("four.pdf", minimalPdf(4, "Contract boundary"));
    const parts = [at("p0.zip"), at("p1.zip")];
    for (const [i, part] of parts.entries()) {
      const r = await engine().renderJpeg(four, part, { pages: [2 * i, 2 * i + 1], dpi: 36 });
      expect(shapeMismatches(r, render)).toEqual([]);
      expect(r.zip).toBe(true);
    }
    expect(typeof (await engine().renderJoin(parts, at("joined.zip")))).toBe("number");
    const compress: Shape<CompressResult> = {
      page_count: "number",
      input_bytes: "number",
      output_bytes: "number",
      kept_original: "boolean",
      path: "string",
    };
    const c = await engine().compress(pdf, at("small.pdf"), { level: "light" });
    expect(shapeMismatches(c, compress)).toEqual([]);
    expect(c.path).toBe("lossless");
  });

  test("the conversions", async () => {
    const toXlsx: Shape<CsvToXlsxResult> = {
      delimiter: "string",
      rows: "number",
      columns: "number",
      numbers: "number",
      dates: "number",
      texts: "number",
    };
    const x = await engine().csvToXlsx(csv, at("t.xlsx"), { has_header: true });
    expect(shapeMismatches(x, toXlsx)).toEqual([]);
    expect(x).toMatchObject({ delimiter: ",", rows: 3, columns: 2 });
    const toCsv: Shape<XlsxToCsvResult> = {
      sheet_name: "string",
      sheet_index: "number",
      sheet_count: "number",
      rows: "number",
      columns: "number",
    };
    expect(shapeMismatches(await engine().xlsxToCsv(at("t.xlsx"), at("t.csv"), {}), toCsv)).toEqual([]);
    const toDocx: Shape<PdfToDocxResult> = {
      pages_processed: "number",
      page_count: "number",
      paragraphs: "number",
      images: "number",
      images_skipped: "number",
      tables: "number",
      pages_without_text: "object",
      pages_ocred: "object",
      pages_unmapped_text: "object",
      lines_recognised: "number",
      output_bytes: "number",
    };
    const d = await engine().pdfToDocx(pdf, at("t.docx"), { pages: [1] });
    expect(shapeMismatches(d, toDocx)).toEqual([]);
    expect(d).toMatchObject({ pages_processed: 1, page_count: 2, pages_without_text: [] });
  });
});
