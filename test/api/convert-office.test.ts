// Issue 7 over real HTTP and real workers: docx -> pdf (warm LibreOffice), xlsx -> csv and
// csv -> xlsx (Rust engine) on every DOCX, XLSX and CSV of the corpus: each gives a valid output
// or a clear documented error. Outputs are downloaded and checked with pdfinfo / pdftotext /
// pdfimages and by reading the XLSX parts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { client, expectEnvelope, type Service, hasCorpus } from "../support/service";
import { corpusFileNames } from "../support/corpus";
import { useService } from "../support/use-service";
import { words, lcs, pdftotextPages } from "../support/text-recall";
import {
  corpusFilesDir,
  createJob,
  download,
  finishedJob,
  keyFor,
  tempDir,
  uploadBytes as rawUploadBytes,
  uploadOk as rawUploadOk,
} from "../support/jobs";
import { parseCsv } from "../support/csv";

const svc = useService({ workers: 2 }, 60_000);
let tmp: ReturnType<typeof tempDir>;
let accountId: string;
/** A fresh key of the test account for every request burst: the per-key rate limit is not under test here. */
let mode: "test" | "live" = "test";
async function freshKey(): Promise<string> {
  return (await keyFor(svc, accountId, mode)).key;
}
const uploadOk = async (_svc: Service, _key: string, name: string, opts?: { filename?: string }) =>
  rawUploadOk(svc, await freshKey(), name, opts);
const uploadBytes = async (_svc: Service, _key: string, data: string, filename: string, type?: string) =>
  rawUploadBytes(svc, await freshKey(), data, filename, type);
const key = "";

beforeAll(async () => {
  tmp = tempDir();
  accountId = (await svc.newKey()).accountId;
}, 60_000);
afterAll(async () => {
  tmp?.cleanup();
}, 60_000);

let n = 0;
async function convert(fileId: string, options: Record<string, unknown>) {
  const key = await freshKey();
  const created = await createJob(svc, key, { operation: "convert", file_id: fileId, options });
  if (created.status !== "queued") throw new Error(`job not queued: ${JSON.stringify(created)}`);
  const job = await finishedJob(svc, key, created.id, 90_000);
  let out = "";
  if (job.status === "succeeded") {
    const d = await download(svc, key, job.id);
    expect(d.status).toBe(200);
    out = join(tmp.dir, `out-${++n}-${job.result.filename}`);
    writeFileSync(out, d.bytes);
  }
  return { job, out };
}

function sh(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}
function pdfPages(path: string): number {
  return Number(/Pages:\s+(\d+)/.exec(sh("pdfinfo", [path]).out)?.[1] ?? -1);
}
function xlsxPart(path: string, part: string): string {
  return spawnSync("unzip", ["-p", path, part], { encoding: "utf8" }).stdout;
}

const corpusOf = corpusFileNames;

describe("docx -> pdf", () => {
  test.skipIf(!hasCorpus)(
    "every corpus DOCX becomes a valid PDF billed by its produced pages",
    async () => {
      const names = corpusOf(".docx");
      expect(names.length).toBeGreaterThanOrEqual(12);
      for (const name of names) {
        const f = await uploadOk(svc, key, name);
        const { job, out } = await convert(f.id, { target: "pdf" });
        if (job.status !== "succeeded")
          throw new Error(`${name}: ${JSON.stringify(job.error)}\n${svc.logs().slice(-3000)}`);
        expect(job.result.content_type).toBe("application/pdf");
        expect(job.result.filename).toBe(name.replace(/\.docx$/, ".pdf"));
        const pages = pdfPages(out);
        expect(pages).toBeGreaterThanOrEqual(1);
        expect(job.result.pages_processed).toBe(pages);
        expect(sh("qpdf", ["--check", out]).code).toBe(0);
      }
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "the text of the document is in the PDF (docx-comments, converted by the crash fallback)",
    async () => {
      const f = await uploadOk(svc, key, "docx-comments.docx");
      const { out } = await convert(f.id, { target: "pdf" });
      const text = sh("pdftotext", [out, "-"]).out;
      const source = spawnSync("unzip", ["-p", join(corpusFilesDir, "docx-comments.docx"), "word/document.xml"], {
        encoding: "utf8",
      }).stdout;
      const words = [...source.matchAll(/<w:t[^>]*>([^<]+)<\/w:t>/g)].flatMap(
        (m) => m[1]!.match(/[A-Za-z]{3,}/g) ?? [],
      );
      expect(words.length).toBeGreaterThan(3);
      for (const w of words) expect(text).toContain(w);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "an external picture link is neither read nor fetched",
    async () => {
      const f = await uploadOk(svc, key, "docx-external-picture.docx");
      const { job, out } = await convert(f.id, { target: "pdf" });
      expect(job.status).toBe("succeeded");
      const list = sh("pdfimages", ["-list", out]).out.trim().split("\n");
      expect(list.length).toBe(2); // header lines only
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "docx -> pptx and docx -> csv are refused with operation_unsupported",
    async () => {
      const f = await uploadOk(svc, key, "docx-tables.docx");
      for (const target of ["pptx", "csv"]) {
        const res = await client(svc.baseUrl, await freshKey())("POST", "/jobs", {
          operation: "convert",
          file_id: f.id,
          options: { target },
        });
        expectEnvelope(res, 422, "operation_unsupported");
      }
    },
    30_000,
  );
});

describe("xlsx -> csv", () => {
  test.skipIf(!hasCorpus)(
    "every corpus XLSX gives a rectangular RFC 4180 CSV or file_encrypted",
    async () => {
      for (const name of corpusOf(".xlsx")) {
        const f = await uploadOk(svc, key, name);
        const { job, out } = await convert(f.id, { target: "csv" });
        if (name === "xlsx-password-protected.xlsx") {
          expect(job.status).toBe("failed");
          expect(job.error.code).toBe("file_encrypted");
          expect(job.error.message).toContain("workbook is password-protected");
          continue;
        }
        if (job.status !== "succeeded") throw new Error(`${name}: ${JSON.stringify(job.error)}`);
        expect(job.result.pages_processed).toBe(1);
        expect(job.result.note).toContain("sheet ");
        const text = readFileSync(out, "utf8");
        const rows = parseCsv(text);
        if (rows.length) {
          const width = rows[0]!.length;
          for (const r of rows) expect(r.length).toBe(width);
        }
        expect(text).not.toMatch(/\d\.\d*0000000000\d/); // no float noise
      }
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "dates in the 1904 date system come out as ISO 8601",
    async () => {
      const f = await uploadOk(svc, key, "xlsx-dates-1904.xlsx");
      const { out } = await convert(f.id, { target: "csv" });
      const text = readFileSync(out, "utf8");
      const isoDates = text.match(/\b(19|20)\d\d-\d\d-\d\d\b/g) ?? [];
      expect(isoDates.length).toBeGreaterThan(0);
      for (const d of isoDates) expect(Number(d.slice(0, 4))).toBeGreaterThan(1905); // not shifted to 1900-1904
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "error cells are written as Excel shows them",
    async () => {
      const f = await uploadOk(svc, key, "xlsx-error-cells.xlsx");
      const { out } = await convert(f.id, { target: "csv" });
      expect(readFileSync(out, "utf8")).toMatch(/#(DIV\/0!|N\/A|NAME\?|NULL!|NUM!|REF!|VALUE!)/);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a sheet is picked by name or index, the delimiter applies, and a missing sheet is invalid_options",
    async () => {
      const f = await uploadOk(svc, key, "xlsx-pivot-tables.xlsx");
      const first = await convert(f.id, { target: "csv" });
      const m = /sheet "([^"]+)" \(index 0 of (\d+) sheets\)/.exec(first.job.result.note)!;
      expect(m).not.toBeNull();
      const count = Number(m[2]);
      expect(count).toBeGreaterThan(1);
      const second = await convert(f.id, { target: "csv", sheet: 1 });
      expect(second.job.result.note).toContain(`(index 1 of ${count} sheets)`);
      const secondName = /sheet "([^"]+)"/.exec(second.job.result.note)![1]!;
      const byName = await convert(f.id, { target: "csv", sheet: secondName, delimiter: ";" });
      expect(byName.job.status).toBe("succeeded");
      expect(parseCsv(readFileSync(byName.out, "utf8"), ";")).toEqual(parseCsv(readFileSync(second.out, "utf8"), ","));
      const missing = await convert(f.id, { target: "csv", sheet: "No such sheet" });
      expect(missing.job.status).toBe("failed");
      expect(missing.job.error.code).toBe("invalid_options");
      const out = await convert(f.id, { target: "csv", sheet: 99 });
      expect(out.job.error.code).toBe("invalid_options");
    },
    90_000,
  );
});

describe("csv -> xlsx", () => {
  test.skipIf(!hasCorpus)(
    "every corpus CSV becomes a workbook whose round trip keeps every cell",
    async () => {
      // Live mode: gdp-by-country.csv has 280 pages, over the sandbox's 100-page cap.
      mode = "live";
      for (const name of corpusOf(".csv")) {
        const f = await uploadOk(svc, key, name);
        const { job, out } = await convert(f.id, { target: "xlsx", has_header: true });
        if (job.status !== "succeeded") throw new Error(`${name}: ${JSON.stringify(job.error)}`);
        expect(job.result.pages_processed).toBe(f.page_count);
        expect(xlsxPart(out, "xl/worksheets/sheet1.xml")).toContain('state="frozen"');
        const back = await uploadOk(svc, key, out, { filename: "back.xlsx" });
        const rt = await convert(back.id, { target: "csv" });
        expect(rt.job.status).toBe("succeeded");
        const original = parseCsv(readFileSync(join(corpusFilesDir, name), "utf8").replace(/^\uFEFF/, "")).filter((r) =>
          r.some((c) => c !== ""),
        );
        const again = parseCsv(readFileSync(rt.out, "utf8"));
        expect(again.length).toBe(original.length);
        for (let r = 0; r < original.length; r++) {
          for (let c = 0; c < original[r]!.length; c++) {
            const a = original[r]![c]!;
            const b = again[r]![c] ?? "";
            // Numbers may be respelled (1.50 -> 1.5, 1e3 -> 1000); everything else is exact.
            if (a !== b && !(a.trim() !== "" && Number(a) === Number(b)))
              throw new Error(`${name} row ${r + 1} col ${c + 1}: ${JSON.stringify(a)} became ${JSON.stringify(b)}`);
          }
        }
      }
      mode = "test";
    },
    120_000,
  );

  test("numbers and ISO dates are typed; leading zeros, long digit strings and phone numbers stay text", async () => {
    const csv =
      "id;amount;when;phone;card;zip\n1;12.5;2024-01-31;+15551234567;4111111111111111;00501\n2;-3;2024-02-29T13:45:00;+44 20 7946 0958;12345678901234567890;007\n";
    const up = await uploadBytes(svc, key, csv, "typed.csv", "text/csv");
    expect(up.status).toBe(201);
    const { job, out } = await convert(up.json.id, { target: "xlsx", has_header: true, sheet_name: "Data 2024" });
    expect(job.status).toBe("succeeded");
    expect(job.result.note).toContain('delimiter ";"');
    const workbook = xlsxPart(out, "xl/workbook.xml");
    expect(workbook).toContain('name="Data 2024"');
    const sheet = xlsxPart(out, "xl/worksheets/sheet1.xml");
    const strings = [...xlsxPart(out, "xl/sharedStrings.xml").matchAll(/<t[^>]*>([^<]*)<\/t>/g)].map((m) => m[1]);
    const cell = (ref: string) => {
      const m = new RegExp(`<c r="${ref}"([^>]*)>(?:<v>([^<]*)</v>)?`).exec(sheet)!;
      const shared = /t="s"/.test(m[1]!);
      return { shared, value: shared ? strings[Number(m[2])] : m[2], attrs: m[1]! };
    };
    expect(cell("A2")).toMatchObject({ shared: false, value: "1" });
    expect(cell("B2")).toMatchObject({ shared: false, value: "12.5" });
    expect(cell("C2").shared).toBe(false);
    expect(cell("C2").value).toBe("45322"); // 2024-01-31 as an Excel serial date
    expect(cell("C2").attrs).toMatch(/s="\d+"/); // with a date format
    expect(cell("D2")).toMatchObject({ shared: true, value: "+15551234567" });
    expect(cell("E2")).toMatchObject({ shared: true, value: "4111111111111111" });
    expect(cell("F2")).toMatchObject({ shared: true, value: "00501" });
    expect(cell("E3")).toMatchObject({ shared: true, value: "12345678901234567890" });
    expect(cell("F3")).toMatchObject({ shared: true, value: "007" });
    expect(Number(cell("C3").value)).toBeCloseTo(45351 + 13.75 / 24, 6);
    expect(sheet).toMatch(/<pane[^>]*ySplit="1"[^>]*state="frozen"/);
    expect(cell("A1").shared).toBe(true);
    expect(xlsxPart(out, "xl/styles.xml")).toContain("<b/>");
  }, 60_000);

  test("an invalid sheet_name fails with invalid_options", async () => {
    const up = await uploadBytes(svc, key, "a,b\n1,2\n", "small.csv", "text/csv");
    const { job } = await convert(up.json.id, { target: "xlsx", sheet_name: "bad/name" });
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("invalid_options");
  }, 30_000);
});

describe("pdf -> docx", () => {
  test.skipIf(!hasCorpus)(
    "a born-digital PDF becomes a DOCX that LibreOffice opens, with the same pages and text",
    async () => {
      const f = await uploadOk(svc, key, "latex-outline-4-pages.pdf");
      const { job, out } = await convert(f.id, { target: "docx" });
      if (job.status !== "succeeded") throw new Error(JSON.stringify(job.error));
      expect(job.result.pages_processed).toBe(4);
      expect(job.result.content_type).toBe("application/vnd.openxmlformats-officedocument.wordprocessingml.document");
      // Round trip through the service's own docx -> pdf.
      const back = await uploadOk(svc, key, out, { filename: "roundtrip.docx" });
      const rt = await convert(back.id, { target: "pdf" });
      expect(rt.job.status).toBe("succeeded");
      expect(pdfPages(rt.out)).toBeGreaterThanOrEqual(4);
      const a = words(pdftotextPages(join(corpusFilesDir, "latex-outline-4-pages.pdf")).join(" "));
      const b = words(pdftotextPages(rt.out).join(" "));
      expect(lcs(a, b) / a.length).toBeGreaterThan(0.95);
    },
    90_000,
  );

  test.skipIf(!hasCorpus)(
    "pages selects the pages converted and billed",
    async () => {
      const f = await uploadOk(svc, key, "latex-outline-4-pages.pdf");
      const { job } = await convert(f.id, { target: "docx", pages: [0, 2] });
      expect(job.status).toBe("succeeded");
      expect(job.result.pages_processed).toBe(2);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a scanned PDF is OCRed: its recognised words become editable paragraphs in reading order",
    async () => {
      const f = await uploadOk(svc, key, "scanned-huckfinn-page.pdf");
      const { job, out } = await convert(f.id, { target: "docx" });
      if (job.status !== "succeeded") throw new Error(JSON.stringify(job.error));
      expect(job.result.pages_processed).toBe(1);
      expect(job.result.note).toContain("recognised by OCR");
      expect(job.result.note).not.toContain("no text layer and were kept as pictures only");
      const xml = xlsxPart(out, "word/document.xml");
      const text = [...xml.matchAll(/<w:t[^>]*>([^<]*)<\/w:t>/g)].map((m) => m[1]).join(" ");
      const got = words(text);
      expect(got.length).toBeGreaterThan(100);
      // Real words of the page, in order.
      let at = 0;
      for (const w of ["widow", "garden", "kitchen", "jim", "listened", "scratch"]) {
        const i = got.indexOf(w, at);
        expect(i).toBeGreaterThanOrEqual(at);
        at = i + 1;
      }
      // The page-sized scan is replaced by its text.
      expect(xml).not.toContain("<w:drawing>");
    },
    90_000,
  );

  test.skipIf(!hasCorpus)(
    "an encrypted PDF fails with file_encrypted",
    async () => {
      const f = await uploadOk(svc, key, "encrypted-libreoffice-rc4.pdf");
      const { job } = await convert(f.id, { target: "docx" });
      expect(job.status).toBe("failed");
      expect(job.error.code).toBe("file_encrypted");
    },
    60_000,
  );
});
