// Rule (issue #15, "a fresh clone ... runs a small self-made fixture set so the engine is still
// exercised"): every capability of the addon runs on inputs made here (test/support/pdf.ts), with
// or without the corpus, and its output is checked by reading it back with the engine. (OCR's
// self-made case is in ocr.test.ts: ocrInit holds for the whole process, and that file checks
// the state before it.)
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { engine } from "../../src/engine/native";
import { blankPdf, minimalPdf } from "../support/pdf";

const dir = mkdtempSync(join(tmpdir(), "engine-fixtures-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
const write = (name: string, bytes: Uint8Array | string) => {
  writeFileSync(at(name), bytes);
  return at(name);
};

/** Three text pages reading "Fixture page 1" .. "Fixture page 3". */
const text3 = write("text3.pdf", minimalPdf(3, "Fixture"));
const blank2 = write("blank2.pdf", blankPdf(2));

async function rejection(p: Promise<unknown>): Promise<{ code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string };
  }
  throw new Error("expected a rejection");
}

/** The words of a PDF's pages in order, read back through the engine's own pdf -> docx. */
async function textOf(pdf: string): Promise<string> {
  const docx = `${pdf}.docx`;
  await engine().pdfToDocx(pdf, docx, {});
  const xml = Bun.spawnSync(["unzip", "-p", docx, "word/document.xml"]).stdout.toString();
  return [...xml.matchAll(/<w:t[^>]*>([^<]*)<\/w:t>/g)]
    .map((m) => m[1])
    .join(" ")
    .replace(/\s+/g, " ");
}

const pageCount = async (pdf: string) => (await engine().identify(pdf)).page_count;

describe("the engine on self-made inputs", () => {
  test("identify: a hand-made PDF is a 3-page unencrypted PDF", async () => {
    expect(await engine().identify(text3)).toMatchObject({ kind: "pdf", page_count: 3, encrypted: false });
  });

  test("page operations: rotate, reorder, delete, merge, split give the pages asked for", async () => {
    expect((await engine().rotate(text3, at("rot.pdf"), { degrees: 90 })).page_count).toBe(3);
    await engine().reorder(text3, at("re.pdf"), { order: [2, 0, 1] });
    expect(await textOf(at("re.pdf"))).toMatch(/Fixture page 3.*Fixture page 1.*Fixture page 2/);
    await engine().deletePages(text3, at("del.pdf"), { pages: [1] });
    expect(await pageCount(at("del.pdf"))).toBe(2);
    const kept = await textOf(at("del.pdf"));
    expect(kept).toMatch(/Fixture page 1.*Fixture page 3/);
    expect(kept).not.toContain("page 2");
    expect((await engine().merge([text3, blank2], at("merged.pdf"))).page_count).toBe(5);
    expect(await pageCount(at("merged.pdf"))).toBe(5);
    expect((await engine().split(text3, at("split.zip"), { mode: "every_page" })).parts).toBe(3);
    expect(
      (
        await engine().split(text3, at("ranges.zip"), {
          mode: "ranges",
          ranges: [
            [1, 2],
            [3, 3],
          ],
        })
      ).parts,
    ).toBe(2);
  });

  test("protect then unlock: encrypted with the password, plain again after, a wrong password is refused", async () => {
    await engine().protect(text3, at("locked.pdf"), { user_password: "fixture-pw" });
    expect(await engine().identify(at("locked.pdf"))).toMatchObject({ kind: "pdf", encrypted: true });
    expect((await rejection(engine().unlock(at("locked.pdf"), at("bad.pdf"), { password: "wrong" }))).code).toBe(
      "invalid_password",
    );
    await engine().unlock(at("locked.pdf"), at("unlocked.pdf"), { password: "fixture-pw" });
    expect(await engine().identify(at("unlocked.pdf"))).toMatchObject({ encrypted: false, page_count: 3 });
  });

  test("render, redact, compress: a JPEG, a ZIP of JPEGs, text gone where redacted, never larger", async () => {
    const one = await engine().renderJpeg(text3, at("p1.jpg"), { pages: [0], dpi: 72 });
    expect(one.zip).toBe(false);
    expect([...readFileSync(at("p1.jpg")).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const all = await engine().renderJpeg(text3, at("all.zip"), { dpi: 72 });
    expect(all).toMatchObject({ zip: true, pages_processed: 3 });
    expect(readFileSync(at("all.zip")).subarray(0, 2).toString()).toBe("PK");
    // The text sits 700 pt above the bottom of a 792 pt page: within the top 200 pt.
    await engine().redact(text3, at("redacted.pdf"), { regions: [{ page: 0, x: 0, y: 0, w: 612, h: 200 }] });
    const after = await textOf(at("redacted.pdf"));
    expect(after).not.toContain("page 1");
    expect(after).toContain("Fixture page 2");
    const c = await engine().compress(text3, at("small.pdf"), { level: "balanced" });
    expect(c.output_bytes).toBeLessThanOrEqual(c.input_bytes);
    expect(await pageCount(at("small.pdf"))).toBe(3);
  });

  test("csv -> xlsx -> csv gives the same records back", async () => {
    const csv = 'name,qty,note\nalpha,1,"comma, inside"\nbeta,22,plain\n';
    const x = await engine().csvToXlsx(write("t.csv", csv), at("t.xlsx"), {});
    expect(x).toMatchObject({ rows: 3, columns: 3 });
    expect(await engine().identify(at("t.xlsx"))).toMatchObject({ kind: "xlsx" });
    await engine().xlsxToCsv(at("t.xlsx"), at("back.csv"), {});
    expect(readFileSync(at("back.csv"), "utf8").replace(/\r\n/g, "\n").trimEnd()).toBe(csv.trimEnd());
  });

  test("pdf -> docx keeps the text; a blank page is reported without text", async () => {
    expect(await textOf(text3)).toMatch(/Fixture page 1.*Fixture page 2.*Fixture page 3/);
    const r = await engine().pdfToDocx(blank2, at("blank.docx"), {});
    expect(r.pages_without_text).toEqual([0, 1]);
  });
});
