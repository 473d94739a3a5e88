// Issue 7, engine level (the native addon directly): xlsx -> csv on every corpus XLSX, csv -> xlsx
// on every corpus CSV, pdf -> docx on every corpus PDF — each gives a valid output or a clear
// documented error code, never a crash or a hang — and pdf -> docx keeps the text of born-digital
// PDFs (word recall against pdftotext).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { engine } from "../../src/engine/native";
import { engineErrorCode } from "../../src/engine/errors";
import { corpusDir, hasCorpus } from "../support/service";
import { corpusFileNames } from "../support/corpus";
import { docxPages, wordRecall } from "../support/text-recall";

const files = join(corpusDir, "files");
const dir = mkdtempSync(join(tmpdir(), "convert-engine-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const corpusOf = corpusFileNames;
const unzipList = (path: string) =>
  spawnSync("unzip", ["-Z1", path], { encoding: "utf8" }).stdout.split("\n").filter(Boolean);
const unzipPart = (path: string, part: string) =>
  spawnSync("unzip", ["-p", path, part], { encoding: "utf8", maxBuffer: 256 << 20 }).stdout;

/** Well-formedness of our own XML parts: balanced tags, via xmllint when present, else a tag-stack check. */
function wellFormed(xml: string): boolean {
  const r = spawnSync("xmllint", ["--noout", "-"], { input: xml });
  if (r.error === undefined && r.status !== null) return r.status === 0;
  const stack: string[] = [];
  for (const m of xml.matchAll(/<(\/?)([\w:]+)[^>]*?(\/?)>/g)) {
    if (m[3]) continue;
    if (m[1]) {
      if (stack.pop() !== m[2]) return false;
    } else stack.push(m[2]!);
  }
  return stack.length === 0;
}

describe("xlsx -> csv (engine)", () => {
  for (const name of corpusOf(".xlsx")) {
    test.skipIf(!hasCorpus)(
      `${name}: a CSV of the first sheet, or encrypted_input for the encrypted workbook`,
      async () => {
        const out = join(dir, `${name}.csv`);
        if (name === "xlsx-password-protected.xlsx") {
          const e = await engine()
            .xlsxToCsv(join(files, name), out, {})
            .catch((e) => e);
          expect(engineErrorCode(e)).toBe("encrypted_input");
          expect(String(e.message)).toContain("workbook is password-protected");
          expect(existsSync(out)).toBe(false);
          return;
        }
        const r = await engine().xlsxToCsv(join(files, name), out, {});
        expect(r.sheet_index).toBe(0);
        expect(r.sheet_count).toBeGreaterThanOrEqual(1);
        const text = readFileSync(out, "utf8");
        expect(text.split("\r\n").length - 1).toBe(r.rows);
      },
    );
  }

  test.skipIf(!hasCorpus)("the 1904 date system gives the same calendar dates as Excel shows", async () => {
    const out = join(dir, "d1904.csv");
    await engine().xlsxToCsv(join(files, "xlsx-dates-1904.xlsx"), out, {});
    // Cached cell values and their formats, read from the package: the first two cells are
    // dates in a 1904 workbook; 1904-01-01 + serial days gives the expected ISO date.
    const sheet = unzipPart(join(files, "xlsx-dates-1904.xlsx"), "xl/worksheets/sheet1.xml");
    const workbook = unzipPart(join(files, "xlsx-dates-1904.xlsx"), "xl/workbook.xml");
    expect(workbook).toMatch(/date1904="(1|true)"/);
    const serial = Number(/<c r="A1"[^>]*><v>([^<]+)<\/v>/.exec(sheet)![1]);
    const expected = new Date(Date.UTC(1904, 0, 1) + serial * 86400000).toISOString().slice(0, 10);
    expect(readFileSync(out, "utf8").split("\r\n")[0]!.split(",")[0]).toBe(expected);
  });

  test.skipIf(!hasCorpus)("a delimiter other than a comma is used and quoting follows it", async () => {
    const out = join(dir, "semi.csv");
    await engine().xlsxToCsv(join(files, "xlsx-strict-ooxml.xlsx"), out, { delimiter: ";" });
    const first = readFileSync(out, "utf8").split("\r\n")[0]!;
    expect(first.split(";").length).toBeGreaterThan(5);
  });

  test.skipIf(!hasCorpus)("a bad delimiter or a missing sheet is invalid_options", async () => {
    for (const opts of [{ delimiter: '"' }, { delimiter: "ab" }, { sheet: "nope" }, { sheet: 7 }]) {
      const e = await engine()
        .xlsxToCsv(join(files, "xlsx-merged-cells.xlsx"), join(dir, "x.csv"), opts)
        .catch((e) => e);
      expect(engineErrorCode(e)).toBe("invalid_options");
    }
  });

  test("a file that is not a workbook is engine_error, not a crash", async () => {
    const bad = join(dir, "bad.xlsx");
    writeFileSync(bad, "PK\u0003\u0004garbage");
    const e = await engine()
      .xlsxToCsv(bad, join(dir, "bad.csv"), {})
      .catch((e) => e);
    expect(engineErrorCode(e)).toBe("engine_error");
  });
});

describe("csv -> xlsx (engine)", () => {
  for (const name of corpusOf(".csv")) {
    test.skipIf(!hasCorpus)(`${name}: a workbook with every record, header frozen`, async () => {
      const out = join(dir, `${name}.xlsx`);
      const r = await engine().csvToXlsx(join(files, name), out, { has_header: true });
      expect(r.delimiter).toBe(",");
      expect(unzipList(out)).toContain("xl/worksheets/sheet1.xml");
      const sheet = unzipPart(out, "xl/worksheets/sheet1.xml");
      expect(wellFormed(sheet)).toBe(true);
      const rowsInSheet = (sheet.match(/<row /g) ?? []).length;
      expect(rowsInSheet).toBe(r.rows);
      expect(r.numbers + r.dates + r.texts).toBeGreaterThan(0);
    });
  }

  test("the delimiter is sniffed (semicolon, tab)", async () => {
    for (const [d, text] of [
      [";", "a;b;c\n1;2,5;x\n3;4;y\n"],
      ["\t", "a\tb\n1\t2\n"],
    ] as const) {
      const p = join(dir, "sniff.csv");
      writeFileSync(p, text);
      const r = await engine().csvToXlsx(p, join(dir, "sniff.xlsx"), {});
      expect(r.delimiter).toBe(d);
    }
  });

  test("an empty CSV gives an empty but valid workbook", async () => {
    const p = join(dir, "empty.csv");
    writeFileSync(p, "");
    const r = await engine().csvToXlsx(p, join(dir, "empty.xlsx"), { has_header: true });
    expect(r.rows).toBe(0);
    expect(wellFormed(unzipPart(join(dir, "empty.xlsx"), "xl/worksheets/sheet1.xml"))).toBe(true);
  });
});

/** Born-digital corpus PDFs with a text layer (MANIFEST feature born-digital, not encrypted). */
function bornDigital(): string[] {
  return readFileSync(join(corpusDir, "MANIFEST.tsv"), "utf8")
    .split("\n")
    .map((l) => l.split("\t"))
    .filter((c) => c[1] === "pdf" && /born-digital/.test(c[7] ?? "") && !/encrypted/.test(c[7] ?? ""))
    .map((c) => c[0]!);
}

describe("cancellation", () => {
  test.skipIf(!hasCorpus)("a cancelled control stops each conversion before it writes anything", async () => {
    const cases: [string, (c: any, out: string) => Promise<unknown>][] = [
      ["xlsx", (c, out) => engine().xlsxToCsv(join(files, "xlsx-strict-ooxml.xlsx"), out, {}, c)],
      ["csv", (c, out) => engine().csvToXlsx(join(files, "gdp-by-country.csv"), out, {}, c)],
      ["pdf", (c, out) => engine().pdfToDocx(join(files, "latex-outline-4-pages.pdf"), out, {}, c)],
    ];
    for (const [what, run] of cases) {
      const control = new (engine().JobControl)();
      control.cancel();
      const out = join(dir, `cancelled-${what}`);
      const e = await run(control, out).catch((e) => e);
      expect(engineErrorCode(e)).toBe("cancelled");
      expect(existsSync(out)).toBe(false);
    }
  });
});

describe("pdf -> docx (engine)", () => {
  test.skipIf(!hasCorpus)(
    "every corpus PDF gives a well-formed DOCX or a documented error code",
    async () => {
      const documented = new Set(["invalid_pdf", "encrypted_input", "engine_error"]);
      for (const name of corpusOf(".pdf")) {
        const out = join(dir, `${name}.docx`);
        try {
          const r = await engine().pdfToDocx(join(files, name), out, {});
          expect(r.pages_processed).toBe(r.page_count);
          const parts = unzipList(out);
          expect(parts).toContain("word/document.xml");
          expect(wellFormed(unzipPart(out, "word/document.xml"))).toBe(true);
          expect(docxPages(out).length).toBe(r.pages_processed);
        } catch (e) {
          if (!documented.has(engineErrorCode(e)))
            throw new Error(`${name}: ${engineErrorCode(e)}: ${(e as Error).message}`);
          expect(existsSync(out)).toBe(false);
        }
      }
    },
    110_000,
  );

  test.skipIf(!hasCorpus)("an enormous page gives a DOCX with a page size Word accepts (at most 22 in)", async () => {
    const out = join(dir, "enormous.docx");
    await engine().pdfToDocx(join(files, "enormous-page-size.pdf"), out, {});
    const m = /<w:pgSz w:w="(\d+)" w:h="(\d+)"/.exec(unzipPart(out, "word/document.xml"))!;
    expect(Number(m[1])).toBeLessThanOrEqual(31680);
    expect(Number(m[2])).toBeLessThanOrEqual(31680);
  });

  test.skipIf(!hasCorpus)("scanned pages are reported without text and no text is invented", async () => {
    const out = join(dir, "scan.docx");
    const r = await engine().pdfToDocx(join(files, "scanned-ccitt-g4.pdf"), out, {});
    expect(r.pages_without_text).toEqual([0]);
    expect(r.images).toBe(1);
    expect(docxPages(out).join("").trim()).toBe("");
  });

  test.skipIf(!hasCorpus)(
    "pages selects and orders nothing else; an out-of-range page is invalid_options",
    async () => {
      const out = join(dir, "p.docx");
      const r = await engine().pdfToDocx(join(files, "latex-outline-4-pages.pdf"), out, { pages: [1, 3] });
      expect(r.pages_processed).toBe(2);
      expect(docxPages(out).length).toBe(2);
      const e = await engine()
        .pdfToDocx(join(files, "latex-outline-4-pages.pdf"), out, { pages: [9] })
        .catch((e) => e);
      expect(engineErrorCode(e)).toBe("invalid_options");
    },
  );

  test.skipIf(!hasCorpus)("bold and italic runs and font sizes are kept (LaTeX title and abstract)", async () => {
    const out = join(dir, "styles.docx");
    await engine().pdfToDocx(join(files, "latex-multicolumn.pdf"), out, {});
    const xml = unzipPart(out, "word/document.xml");
    expect(xml).toContain("<w:b/>");
    const sizes = new Set([...xml.matchAll(/<w:sz w:val="(\d+)"/g)].map((m) => m[1]));
    expect(sizes.size).toBeGreaterThan(2);
  });

  test.skipIf(!hasCorpus)(
    "single-flow prose PDFs keep at least 98% of pdftotext's words, in order",
    async () => {
      for (const name of [
        "pdfa-crazyones.pdf",
        "latex-outline-4-pages.pdf",
        "with-file-attachment.pdf",
        "japanese-tex-dvipdfmx.pdf",
      ]) {
        const out = join(dir, `${name}.r.docx`);
        await engine().pdfToDocx(join(files, name), out, {});
        const r = wordRecall(join(files, name), out);
        expect(r.reference).toBeGreaterThan(50);
        if (r.recall < 0.98) throw new Error(`${name}: recall ${r.recall}`);
      }
      expect(bornDigital().length).toBeGreaterThan(10);
    },
    60_000,
  );
});
