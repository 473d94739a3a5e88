// The hOCR and ALTO renderings of the OCR blocks JSON (src/presenters/hocr.ts, alto.ts; docs/ocr.md,
// "hOCR and ALTO"): every word with its box and confidence in the format's units, pages that were
// not read kept as empty pages, right-to-left lines marked, hostile text escaped; every output
// accepted by its validator (hocr-spec, the ALTO 4.3 schema), which refuses a broken copy.
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderAlto } from "../../src/presenters/alto";
import { renderHocr } from "../../src/presenters/hocr";
import type { OcrBlocksJson, OcrPageJson } from "../../src/presenters/ocr-blocks";
import { tempDir } from "../support/jobs";
import {
  altoValidatorMissing,
  hocrValidatorMissing,
  validateAlto,
  validateHocr,
  wellFormed,
} from "../support/ocr-formats";

const fixture: OcrBlocksJson = JSON.parse(
  readFileSync(join(import.meta.dir, "../../src/worker/operations/fixtures/ocr-blocks.json"), "utf8"),
);

const hasText: OcrPageJson = {
  page: 1,
  width: 612,
  height: 792,
  ocr: false,
  skipped: "has_text",
  text_rotation: 0,
  text: "Born-digital text that was not OCRed",
  blocks: [],
};
const timedOut: OcrPageJson = {
  page: 2,
  width: 612,
  height: 792,
  ocr: false,
  text_rotation: 0,
  text: "",
  blocks: [],
  error: { code: "ocr_timeout", message: "Tesseract stopped at its deadline" },
};
const hostile = "a&b <c> \"d\" 'e' \u0001\uFFFE";
const hebrew: OcrPageJson = {
  page: 3,
  width: 144,
  height: 72,
  ocr: true,
  dpi: 300,
  text_rotation: 0,
  text: "שלום עולם",
  engine: "tesseract-5.3.0",
  blocks: [
    {
      bbox: [10, 10, 130, 30],
      lines: [
        {
          text: "שלום עולם",
          bbox: [10, 10, 130, 30],
          confidence: 0.9,
          words: [
            { text: "שלום", bbox: [70, 10, 130, 30], confidence: 0.95 },
            { text: "עולם", bbox: [10, 10, 60, 30], confidence: 0.85 },
          ],
        },
        {
          text: hostile,
          bbox: [10, 40, 130, 60],
          confidence: 0.5,
          words: [
            { text: hostile, bbox: [10, 40, 130, 60], confidence: 0.5 },
            { text: " ", bbox: [0, 0, 1, 1], confidence: 1 },
          ],
        },
      ],
    },
  ],
};
const doc: OcrBlocksJson = { ...fixture, pages: [...fixture.pages, hasText, timedOut, hebrew] };
const facts = { filename: 'scan "1"; <a>.pdf', languages: ["heb", "eng"], version: "2026-09-01" };

const fixtureWords = fixture.pages.flatMap((p) => p.blocks.flatMap((b) => b.lines.flatMap((l) => l.words)));
const count = (s: string, re: RegExp) => s.match(re)?.length ?? 0;

describe("hOCR", () => {
  const hocr = renderHocr(doc, facts);

  test("every word of the JSON is an ocrx_word with its box in pixels at the page's dpi and x_wconf in percent", () => {
    // Three pages of the fixture's words plus the two Hebrew words and the hostile one (the blank word is left out).
    expect(count(hocr, /class="ocrx_word"/g)).toBe(fixtureWords.length + 3);
    const first = fixture.pages[0]!;
    const w = first.blocks[0]!.lines[0]!.words[0]!;
    const px = (v: number) => Math.round((v * first.dpi!) / 72);
    expect(hocr).toContain(
      `title="bbox ${w.bbox.map(px).join(" ")}; x_wconf ${Math.round(w.confidence * 100)}">${w.text}</span>`,
    );
    expect(hocr).toContain(
      `bbox 0 0 ${px(first.width)} ${px(first.height)}; ppageno 0; scan_res ${first.dpi} ${first.dpi}`,
    );
  });

  test("a page that was not read is an empty ocr_page with its size in points and says why", () => {
    const page = /<div class="ocr_page" id="page_2"[^>]*>([\s\S]*?)<\/div>/.exec(hocr)!;
    expect(page[0]).toContain("bbox 0 0 612 792; ppageno 1; scan_res 72 72");
    expect(page[1]).toContain("not OCRed: the page already carries a text layer");
    expect(page[1]).not.toContain("ocr_line");
    expect(hocr).toContain("not read: ocr_timeout");
    expect(count(hocr, /class="ocr_page"/g)).toBe(doc.pages.length);
  });

  test("a right-to-left line has dir rtl and the one right-to-left language asked for", () => {
    expect(hocr).toMatch(/class="ocr_line" id="line_4_1" title="bbox 42 42 542 125" dir="rtl" lang="he">/);
    expect(hocr).toContain(
      '<meta name="ocr-capabilities" content="ocr_page ocr_carea ocr_par ocr_line ocrx_word ocrp_wconf ocrp_dir ocrp_lang"/>',
    );
    // No right-to-left language named: the direction only.
    const unnamed = renderHocr(doc, { ...facts, languages: ["ara", "heb"] });
    expect(unnamed).toMatch(/id="line_4_1" title="[^"]*" dir="rtl">/);
    expect(renderHocr(fixture, facts)).not.toContain("ocrp_dir");
  });

  test("markup characters are escaped and characters XML cannot carry become U+FFFD", () => {
    expect(hocr).toContain(">a&amp;b &lt;c&gt; &quot;d&quot; &#x27;e&#x27; \uFFFD\uFFFD</span>");
    expect(hocr).toContain("image &quot;scan _1__ &lt;a&gt;.pdf&quot;");
    expect(hocr).toContain("<title>scan &quot;1&quot;; &lt;a&gt;.pdf</title>");
  });

  test("the document names the recognisers and the pages", () => {
    expect(hocr).toContain('<meta name="ocr-system" content="docproc 2026-09-01 (pp-ocrv6-tiny, tesseract-5.3.0)"/>');
    expect(hocr).toContain(`<meta name="ocr-number-of-pages" content="${doc.pages.length}"/>`);
    expect(hocr).toContain('<meta name="ocr-langs" content="heb eng"/>');
  });

  test.skipIf(!!hocrValidatorMissing || !!altoValidatorMissing)(
    "hocr-spec accepts the document (and refuses a line without a box); it is well-formed XHTML",
    () => {
      const tmp = tempDir();
      try {
        const good = join(tmp.dir, "good.hocr");
        writeFileSync(good, hocr);
        const v = validateHocr(good);
        expect(v.report).toContain("Document is valid");
        expect(v.valid).toBe(true);
        expect(wellFormed(good).valid).toBe(true);
        const bad = join(tmp.dir, "bad.hocr");
        writeFileSync(bad, hocr.replace(/(class="ocr_line" id="line_1_1") title="[^"]*"/, "$1"));
        expect(validateHocr(bad).valid).toBe(false);
      } finally {
        tmp.cleanup();
      }
    },
  );
});
if (hocrValidatorMissing) console.log(`SKIP: hOCR validation: ${hocrValidatorMissing}`);
if (altoValidatorMissing) console.log(`SKIP: ALTO validation: ${altoValidatorMissing}`);

describe("ALTO", () => {
  const alto = renderAlto(doc, facts);
  const mm10 = (pt: number) => Math.round((pt * 254) / 72);

  test("every word of the JSON is a String with its box in mm10 and WC, and an SP between two words", () => {
    expect(count(alto, /<String /g)).toBe(fixtureWords.length + 3);
    const lines = fixture.pages.flatMap((p) => p.blocks.flatMap((b) => b.lines));
    const spaces = lines.reduce((n, l) => n + l.words.length - 1, 0) + 1;
    expect(count(alto, /<SP[ /]/g)).toBe(spaces);
    const w = fixture.pages[0]!.blocks[0]!.lines[0]!.words[0]!;
    const [x0, y0, x1, y1] = w.bbox.map(mm10);
    expect(alto).toContain(
      `HPOS="${x0}" VPOS="${y0}" WIDTH="${x1! - x0!}" HEIGHT="${y1! - y0!}" CONTENT="${w.text}" WC="${w.confidence.toFixed(3)}"/>`,
    );
    expect(alto).toContain("<MeasurementUnit>mm10</MeasurementUnit>");
  });

  test("a page that was not read is a Page with its size, an empty PrintSpace and why in QUALITY_DETAIL", () => {
    expect(alto).toContain(
      `<Page ID="page_2" PHYSICAL_IMG_NR="2" WIDTH="${mm10(612)}" HEIGHT="${mm10(792)}" QUALITY_DETAIL="not OCRed: the page already carries a text layer"`,
    );
    expect(alto).toContain('QUALITY_DETAIL="not read: ocr_timeout"');
    expect(count(alto, /<Page /g)).toBe(doc.pages.length);
  });

  test("a right-to-left line has BASEDIRECTION rtl, and the space between its words lies between them", () => {
    expect(alto).toMatch(/<TextLine ID="line_4_1" [^>]* BASEDIRECTION="rtl" LANG="he">/);
    // שלום (70-130 pt) is read first, עולם (10-60 pt) second, to its left.
    expect(alto).toContain(`<SP HPOS="${mm10(60)}" WIDTH="${mm10(70) - mm10(60)}"/>`);
  });

  test("markup characters are escaped and characters XML cannot carry become U+FFFD", () => {
    expect(alto).toContain('CONTENT="a&amp;b &lt;c&gt; &quot;d&quot; &#x27;e&#x27; \uFFFD\uFFFD"');
    expect(alto).toContain("<fileName>scan &quot;1&quot;; &lt;a&gt;.pdf</fileName>");
  });

  test.skipIf(!!altoValidatorMissing)(
    "the ALTO 4.3 schema accepts the document (and refuses a String without CONTENT)",
    () => {
      const tmp = tempDir();
      try {
        const good = join(tmp.dir, "good.xml");
        writeFileSync(good, alto);
        const v = validateAlto(good);
        expect(v.report).toContain("validates");
        expect(v.valid).toBe(true);
        const bad = join(tmp.dir, "bad.xml");
        writeFileSync(bad, alto.replace(/ CONTENT="This"/, ""));
        expect(validateAlto(bad).valid).toBe(false);
      } finally {
        tmp.cleanup();
      }
    },
  );
});
