// The soak test's inputs (soak.ts): files of the corpus (../shared/corpus or CORPUS_DIR) when it
// is there, else small self-made files (then the office conversions and image OCR are left out).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir } from "../test/support/service";
import { minimalPdf } from "../test/support/pdf";

export interface Input {
  name: string;
  bytes: Uint8Array;
  contentType: string;
}

export function loadInputs(): {
  pdfs: Input[];
  docx: Input[];
  xlsx: Input[];
  csv: Input[];
  images: Input[];
  source: string;
} {
  const dir = join(corpusDir, "files");
  const pick = (names: string[], type: string) =>
    names
      .filter((n) => existsSync(join(dir, n)))
      .map((n) => ({ name: n, bytes: new Uint8Array(readFileSync(join(dir, n))), contentType: type }));
  if (existsSync(dir)) {
    const pdfs = pick(
      [
        "latex-outline-4-pages.pdf",
        "google-docs-export.pdf",
        "latex-multicolumn.pdf",
        "pdfa-crazyones.pdf",
        "pdf20-utf8-test.pdf",
        "libreoffice-form-fields.pdf",
      ],
      "application/pdf",
    );
    const docx = pick(
      ["docx-tables.docx", "docx-hyperlinks.docx", "docx-footnotes.docx"],
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    const xlsx = readdirSync(dir)
      .filter((n) => n.endsWith(".xlsx"))
      .slice(0, 3);
    const csv = pick(["country-codes-utf8.csv", "gdp-by-country.csv"], "text/csv");
    const images = pick(["hebrew-typography.jpg", "devanagari-rotated-270.png"], "image/jpeg").map((i) => ({
      ...i,
      contentType: i.name.endsWith(".png") ? "image/png" : "image/jpeg",
    }));
    if (pdfs.length >= 2)
      return {
        pdfs,
        docx,
        xlsx: pick(xlsx, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        csv,
        images,
        source: `corpus (${dir})`,
      };
  }
  const pdfs = [1, 3, 6].map((n) => ({
    name: `self-${n}.pdf`,
    bytes: minimalPdf(n, `soak ${n}`),
    contentType: "application/pdf",
  }));
  const csv = [
    {
      name: "self.csv",
      bytes: new TextEncoder().encode(
        "a,b,c\n" + Array.from({ length: 120 }, (_, i) => `${i},x${i},${i * 2}`).join("\n"),
      ),
      contentType: "text/csv",
    },
  ];
  return {
    pdfs,
    docx: [],
    xlsx: [],
    csv,
    images: [],
    source: "self-made files (corpus absent: docx/xlsx conversions and image OCR left out)",
  };
}
