// Issue 6 over real HTTP and real workers: `ocr` (blocks and searchable_pdf outputs, modes base
// and gundam) and `searchable_pdf` on corpus scans, checking recognised words (JSON blocks, and
// pdftotext on the searchable PDFs), result formats, gundam validation and the sandbox fixture.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { corpusDir, startService, type Service, hasCorpus } from "../support/service";
import { createJob, download, finishedJob, keyFor, tempDir, uploadOk } from "../support/jobs";

const ocrCorpus = (name: string) => join(corpusDir, "ocr", name);
const filesCorpus = (name: string) => join(corpusDir, "files", name);

function pdftotext(path: string): string {
  return spawnSync("pdftotext", ["-layout", path, "-"], { encoding: "utf8" }).stdout;
}
function pdfPages(path: string): number {
  return Number(/Pages:\s+(\d+)/.exec(spawnSync("pdfinfo", [path], { encoding: "utf8" }).stdout)?.[1] ?? -1);
}
function pageRotation(path: string): number {
  return Number(/Page rot:\s+(\d+)/.exec(spawnSync("pdfinfo", [path], { encoding: "utf8" }).stdout)?.[1] ?? -1);
}
const norm = (s: string) => s.replace(/\s+/g, " ");

describe("ocr with SANDBOX_OCR=real", () => {
  let svc: Service;
  let tmp: ReturnType<typeof tempDir>;
  let accountId: string;
  const key = async () => (await keyFor(svc, accountId, "test")).key;

  beforeAll(async () => {
    svc = await startService({ workers: 2, env: { SANDBOX_OCR: "real" } });
    tmp = tempDir();
    accountId = (await svc.newKey()).accountId;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    tmp?.cleanup();
  }, 60_000);

  async function run(path: string, operation: string, options: Record<string, unknown>) {
    const k = await key();
    const file = await uploadOk(svc, k, path);
    const created = await createJob(svc, k, { operation, file_id: file.id, options });
    const job = await finishedJob(svc, k, created.id, 120_000);
    return { k, job };
  }

  test.skipIf(!hasCorpus)(
    "ocr blocks (mode base) reads all four turned pages and answers JSON only",
    async () => {
      const { k, job } = await run(filesCorpus("scanned-rotated-4-directions.pdf"), "ocr", {
        mode: "base",
        output: "blocks",
      });
      expect(job.status).toBe("succeeded");
      expect(job.result.type).toBe("json");
      expect(job.result.pages_processed).toBe(4);
      const file = await download(svc, k, job.id);
      expect(file.status).toBe(409);
      expect(file.json.error.code).toBe("no_downloadable_result");
      const r = await download(svc, k, job.id, "?format=json");
      expect(r.status).toBe(200);
      expect(r.json.fixture).toBeUndefined();
      expect(r.json.unit).toBe("pt");
      expect(r.json.pages.length).toBe(4);
      const first = new Set<string>(r.json.pages[0].text.toLowerCase().match(/[a-z]{4,}/g));
      expect(first.size).toBeGreaterThan(5);
      for (const p of r.json.pages) {
        expect(p.ocr).toBe(true);
        const words = new Set<string>(p.text.toLowerCase().match(/[a-z]{4,}/g));
        const common = [...first].filter((w) => words.has(w)).length;
        expect(common / first.size).toBeGreaterThan(0.7);
        const w = p.blocks[0].lines[0].words[0];
        expect(typeof w.text).toBe("string");
        expect(w.confidence).toBeGreaterThan(0);
        expect(w.bbox[2]).toBeLessThanOrEqual(p.width + 0.01);
        expect(w.bbox[3]).toBeLessThanOrEqual(p.height + 0.01);
      }
    },
    180_000,
  );

  test.skipIf(!hasCorpus)(
    "ocr blocks (mode gundam) reads only the selected page",
    async () => {
      const { k, job } = await run(ocrCorpus("sroie-receipt-054.jpg"), "ocr", { mode: "gundam" });
      expect(job.status).toBe("succeeded");
      const r = await download(svc, k, job.id, "?format=json");
      expect(r.json.mode).toBe("gundam");
      expect(r.json.pages.length).toBe(1);
      const text = norm(r.json.pages[0].text);
      for (const w of ["CARREFOUR RESTAURANT", "TOTAL", "13.80", "GOODS SOLD ARE NOT RETURNABLE"])
        expect(text).toContain(w);
    },
    120_000,
  );

  test.skipIf(!hasCorpus)("gundam with more than one page index is refused at creation", async () => {
    const k = await key();
    const file = await uploadOk(svc, k, filesCorpus("scanned-rotated-4-directions.pdf"));
    const { client } = await import("../support/service");
    const r = await client(svc.baseUrl, k)("POST", "/jobs", {
      operation: "ocr",
      file_id: file.id,
      options: { mode: "gundam", pages: [0, 1] },
    });
    expect(r.status).toBe(422);
    expect(r.json.error.code).toBe("invalid_options");
  });

  test.skipIf(!hasCorpus)(
    "rotate_pages and deskew (extensions) must be booleans and go with output searchable_pdf, else 422 naming them",
    async () => {
      const k = await key();
      const file = await uploadOk(svc, k, filesCorpus("scanned-rotated-4-directions.pdf"));
      const { client } = await import("../support/service");
      const post = client(svc.baseUrl, k);
      for (const [operation, options, param] of [
        ["searchable_pdf", { rotate_pages: "yes" }, "options.rotate_pages"],
        ["ocr", { output: "searchable_pdf", deskew: 1 }, "options.deskew"],
        ["ocr", { deskew: true }, "options.deskew"],
        ["ocr", { output: "alto", rotate_pages: false }, "options.rotate_pages"],
      ] as const) {
        const r = await post("POST", "/jobs", { operation, file_id: file.id, options });
        expect(r.status).toBe(422);
        expect(r.json.error.code).toBe("invalid_options");
        expect(r.json.error.param).toBe(param);
      }
    },
  );

  test.skipIf(!hasCorpus)(
    "ocr with output searchable_pdf keeps the page and pdftotext reads the columns in order",
    async () => {
      const { k, job } = await run(ocrCorpus("ocrmypdf-linn-brochure-scan.pdf"), "ocr", {
        mode: "base",
        output: "searchable_pdf",
      });
      expect(job.status).toBe("succeeded");
      expect(job.result.content_type).toBe("application/pdf");
      const d = await download(svc, k, job.id);
      expect(d.status).toBe(200);
      const out = join(tmp.dir, "linn.pdf");
      writeFileSync(out, d.bytes);
      expect(pdfPages(out)).toBe(1);
      const text = spawnSync("pdftotext", [out, "-"], { encoding: "utf8" }).stdout;
      for (const w of ["LinnSequencer", "MIDI", "synchronization", "overdubbed"]) expect(text).toContain(w);
      expect(text.indexOf("To record a sequence")).toBeGreaterThan(-1);
      expect(text.indexOf("To record a sequence")).toBeLessThan(text.indexOf("The INSERT/COPY function"));
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "searchable_pdf (mode gundam) on a PNG turned sideways makes a one-page PDF with its words, shown upright (rotate_pages, default true)",
    async () => {
      const { k, job } = await run(filesCorpus("phototest-rotated-90.png"), "searchable_pdf", { mode: "gundam" });
      expect(job.status).toBe("succeeded");
      const d = await download(svc, k, job.id);
      const out = join(tmp.dir, "photo.pdf");
      writeFileSync(out, d.bytes);
      expect(pdfPages(out)).toBe(1);
      expect(norm(pdftotext(out))).toContain("quick brown dog");
      // The image is turned a quarter: the page turns back (the engine tests render and read it).
      expect([90, 270]).toContain(pageRotation(out));
      const kept = await run(filesCorpus("phototest-rotated-90.png"), "searchable_pdf", { rotate_pages: false });
      const keptOut = join(tmp.dir, "photo-kept.pdf");
      writeFileSync(keptOut, (await download(svc, kept.k, kept.job.id)).bytes);
      expect(pageRotation(keptOut)).toBe(0);
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "ocr on a WebP image reads it as one page",
    async () => {
      // MuPDF has no WebP decoder; the engine decodes it (alpha flattened on white).
      const { k, job } = await run(filesCorpus("webp-lossless.webp"), "ocr", { mode: "gundam" });
      expect(job.status).toBe("succeeded");
      expect(job.result.pages_processed).toBe(1);
      const r = await download(svc, k, job.id, "?format=json");
      expect(r.json.pages.length).toBe(1);
      expect(r.json.pages[0].ocr).toBe(true);
      expect(r.json.pages[0].width).toBeGreaterThan(0);
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "a decompression bomb fails the job with file_unreadable within seconds",
    async () => {
      const { job } = await run(filesCorpus("decompression-bomb.pdf"), "searchable_pdf", { mode: "base" });
      expect(job.status).toBe("failed");
      expect(job.error.code).toBe("file_unreadable");
      expect(Date.parse(job.finished_at) - Date.parse(job.started_at)).toBeLessThan(30_000);
    },
    120_000,
  );

  test.skipIf(!hasCorpus)(
    "billing by the spec: a live ocr job on a born-digital PDF settles 3 credits for every page returned, text read from the PDF",
    async () => {
      const live = (await keyFor(svc, accountId, "live")).key;
      const file = await uploadOk(svc, live, filesCorpus("latex-outline-4-pages.pdf"));
      const created = await createJob(svc, live, { operation: "ocr", file_id: file.id, options: { pages: [0, 2] } });
      const job = await finishedJob(svc, live, created.id, 120_000);
      expect(job.status).toBe("succeeded");
      expect(job.result.pages_processed).toBe(2);
      const r = await download(svc, live, job.id, "?format=json");
      expect(r.json.pages.map((p: any) => [p.page, p.ocr, p.skipped])).toEqual([
        [0, false, "has_text"],
        [2, false, "has_text"],
      ]);
      for (const p of r.json.pages) expect(p.text.replace(/\s/g, "").length).toBeGreaterThanOrEqual(16);
      const charges =
        await svc.sql`SELECT credits, pages FROM credit_ledger WHERE job_id = ${job.id} AND entry = 'charge'`;
      expect(charges.map((c) => [c.credits, c.pages])).toEqual([[6, 2]]);

      const sp = await createJob(svc, live, { operation: "searchable_pdf", file_id: file.id, options: {} });
      const spJob = await finishedJob(svc, live, sp.id, 120_000);
      expect(spJob.status).toBe("succeeded");
      expect(spJob.result.pages_processed).toBe(4);
      const spCharges = await svc.sql`SELECT credits FROM credit_ledger WHERE job_id = ${sp.id} AND entry = 'charge'`;
      expect(spCharges.map((c) => c.credits)).toEqual([12]);
    },
    180_000,
  );

  test.skipIf(!hasCorpus)(
    "searchable_pdf (mode base) keeps every page of a scan",
    async () => {
      const { k, job } = await run(filesCorpus("scanned-mixed-3-pages.pdf"), "searchable_pdf", { mode: "base" });
      expect(job.status).toBe("succeeded");
      const d = await download(svc, k, job.id);
      const out = join(tmp.dir, "mixed.pdf");
      writeFileSync(out, d.bytes);
      expect(pdfPages(out)).toBe(3);
      const words = pdftotext(out).match(/[A-Za-z]{4,}/g) ?? [];
      expect(words.length).toBeGreaterThan(20);
    },
    180_000,
  );
});

describe("ocr with SANDBOX_OCR=fixture", () => {
  let svc: Service;
  let tmp: ReturnType<typeof tempDir>;
  let accountId: string;

  beforeAll(async () => {
    svc = await startService({ workers: 1, env: { SANDBOX_OCR: "fixture" } });
    tmp = tempDir();
    accountId = (await svc.newKey()).accountId;
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    tmp?.cleanup();
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "sandbox ocr jobs answer at once with a marked fixture of the real shape",
    async () => {
      const k = (await keyFor(svc, accountId, "test")).key;
      const file = await uploadOk(svc, k, filesCorpus("scanned-rotated-4-directions.pdf"));
      const t0 = Date.now();
      const created = await createJob(svc, k, { operation: "ocr", file_id: file.id, options: { output: "blocks" } });
      const job = await finishedJob(svc, k, created.id, 30_000);
      expect(Date.now() - t0).toBeLessThan(5_000);
      expect(job.status).toBe("succeeded");
      const r = await download(svc, k, job.id, "?format=json");
      expect(r.json.fixture).toBe(true);
      expect(r.json.pages[0].blocks[0].lines[0].words[0].text).toBe("This");

      const created2 = await createJob(svc, k, { operation: "searchable_pdf", file_id: file.id, options: {} });
      const job2 = await finishedJob(svc, k, created2.id, 30_000);
      expect(job2.status).toBe("succeeded");
      expect(job2.result.note).toContain("fixture");
      const d = await download(svc, k, job2.id);
      const out = join(tmp.dir, "fixture.pdf");
      writeFileSync(out, d.bytes);
      expect(norm(pdftotext(out))).toContain("quick brown dog");
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "sandbox ocr jobs with output hocr or alto render the fixture as a marked file",
    async () => {
      const k = (await keyFor(svc, accountId, "test")).key;
      const file = await uploadOk(svc, k, filesCorpus("scanned-rotated-4-directions.pdf"));
      for (const [output, type, filename] of [
        ["hocr", "application/xhtml+xml", "scanned-rotated-4-directions-ocr-fixture.hocr"],
        ["alto", "application/xml", "scanned-rotated-4-directions-ocr-fixture.alto.xml"],
      ] as const) {
        const created = await createJob(svc, k, { operation: "ocr", file_id: file.id, options: { output } });
        const job = await finishedJob(svc, k, created.id, 30_000);
        expect(job.status).toBe("succeeded");
        expect(job.result).toMatchObject({ content_type: type, filename });
        expect(job.result.note).toContain("fixture");
        const text = new TextDecoder().decode((await download(svc, k, job.id)).bytes);
        expect(text).toContain(output === "hocr" ? ">quick</span>" : 'CONTENT="quick"');
      }
    },
    60_000,
  );
});
