// Issue 40, item 5 over real HTTP and real workers: `ocr` with output hocr and alto (extensions)
// answers a downloadable file (application/xhtml+xml, application/xml) that its validator
// accepts (hocr-spec; xmllint against the ALTO 4.3 schema), holding the words of the blocks
// result; a job split into page-range tasks renders the joined pages once, as a whole run
// would, keeps a page that already carried text as an empty page, and bills like blocks.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { renderAlto } from "../../src/presenters/alto";
import { apiVersion } from "../../src/domain/pricing";
import { corpusDir, hasCorpus } from "../support/service";
import { createJob, download, finishedJob, keyFor, makePdf, tempDir, uploadOk } from "../support/jobs";
import {
  altoValidatorMissing,
  hocrValidatorMissing,
  validateAlto,
  validateHocr,
  wellFormed,
} from "../support/ocr-formats";
import { useService } from "../support/use-service";

const ready = hasCorpus && !altoValidatorMissing && !hocrValidatorMissing;
if (!hasCorpus) console.log("SKIP: ocr hocr/alto API tests: the corpus is missing");
if (altoValidatorMissing) console.log(`SKIP: ocr hocr/alto API tests: ${altoValidatorMissing}`);
if (hocrValidatorMissing) console.log(`SKIP: ocr hocr/alto API tests: ${hocrValidatorMissing}`);

const svc = useService({ workers: 2, env: { SANDBOX_OCR: "real", OCR_THREADS: "1" } }, 60_000);
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const xmlUnescape = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");
const jsonWords = (doc: any): string[] =>
  doc.pages.flatMap((p: any) =>
    p.blocks.flatMap((b: any) => b.lines.flatMap((l: any) => l.words.map((w: any) => w.text))),
  );

async function ocrJob(key: string, fileId: string, options: Record<string, unknown>) {
  const created = await createJob(svc, key, { operation: "ocr", file_id: fileId, options });
  const job = await finishedJob(svc, key, created.id, 240_000);
  expect({ status: job.status, error: job.error ?? null }).toEqual({ status: "succeeded", error: null });
  return job;
}

describe.skipIf(!ready)("ocr output hocr and alto", () => {
  test("one scan as hOCR and as ALTO: files that hocr-spec and the ALTO 4.3 schema accept, with the words of the blocks result", async () => {
    const { accountId } = await svc.newKey();
    const { key } = await keyFor(svc, accountId, "test");
    const file = await uploadOk(svc, key, join(corpusDir, "files", "scanned-huckfinn-page.pdf"));
    const blocks = await ocrJob(key, file.id, { output: "blocks" });
    const words = jsonWords((await download(svc, key, blocks.id, "?format=json")).json);
    expect(words.length).toBeGreaterThan(100);

    const hocrJob = await ocrJob(key, file.id, { output: "hocr" });
    expect(hocrJob.result).toMatchObject({
      type: "file",
      content_type: "application/xhtml+xml",
      filename: "scanned-huckfinn-page-ocr.hocr",
      pages_processed: 1,
    });
    const hocr = await download(svc, key, hocrJob.id);
    expect(hocr.status).toBe(200);
    // Downloads are application/octet-stream; the result's own type is in x-result-content-type.
    expect(hocr.headers.get("x-result-content-type")).toBe("application/xhtml+xml");
    const hocrPath = join(tmp.dir, "huckfinn.hocr");
    writeFileSync(hocrPath, hocr.bytes);
    const hv = validateHocr(hocrPath);
    expect(hv.report).toContain("Document is valid");
    expect(wellFormed(hocrPath).valid).toBe(true);
    const hocrText = new TextDecoder().decode(hocr.bytes);
    expect([...hocrText.matchAll(/class="ocrx_word"[^>]*>([^<]*)</g)].map((m) => xmlUnescape(m[1]!))).toEqual(words);

    const altoJob = await ocrJob(key, file.id, { output: "alto" });
    expect(altoJob.result).toMatchObject({
      content_type: "application/xml",
      filename: "scanned-huckfinn-page-ocr.alto.xml",
    });
    const alto = await download(svc, key, altoJob.id);
    expect(alto.headers.get("x-result-content-type")).toBe("application/xml");
    const altoPath = join(tmp.dir, "huckfinn.xml");
    writeFileSync(altoPath, alto.bytes);
    const av = validateAlto(altoPath);
    expect(av.report).toContain("validates");
    const altoText = new TextDecoder().decode(alto.bytes);
    expect([...altoText.matchAll(/<String [^>]*CONTENT="([^"]*)"/g)].map((m) => xmlUnescape(m[1]!))).toEqual(words);
  }, 300_000);

  test("an 8-page ALTO job is split into tasks; its file is the joined blocks rendered once, valid, the page with text an empty Page, billed 3 a page", async () => {
    const { accountId } = await svc.newKey();
    const { key } = await keyFor(svc, accountId, "live");
    // Pages 1-6 of the scan (its page 4 already carries text) and its pages 1-2 again.
    const eight = makePdf(tmp.dir, "eight.pdf", [
      { file: "scanned-multipage-assembly.pdf" },
      { file: "scanned-multipage-assembly.pdf", range: "1-2" },
    ]);
    const file = await uploadOk(svc, key, eight);
    expect(file.page_count).toBe(8);

    const altoJob = await ocrJob(key, file.id, { output: "alto" });
    const tasks = await svc.sql`SELECT pages, status FROM job_tasks WHERE job_id = ${altoJob.id} ORDER BY seq`;
    expect(tasks.map((t) => [t.pages, t.status])).toEqual([
      [[0, 1, 2, 3], "done"],
      [[4, 5, 6, 7], "done"],
    ]);
    const alto = new TextDecoder().decode((await download(svc, key, altoJob.id)).bytes);
    const altoPath = join(tmp.dir, "eight.xml");
    writeFileSync(altoPath, alto);
    expect(validateAlto(altoPath).report).toContain("validates");
    expect(alto.match(/<Page /g)?.length).toBe(8);
    expect(alto).toMatch(
      /<Page ID="page_4" [^>]*QUALITY_DETAIL="not OCRed: the page already carries a text layer"[^>]*>\s*<PrintSpace [^>]*>\s*<\/PrintSpace>/,
    );

    // The blocks of the same pages (also split, and equal to whole runs: fanout.test.ts),
    // rendered here: the same document.
    const blocksJob = await ocrJob(key, file.id, { output: "blocks" });
    const { mode: _mode, ...blocks } = (await download(svc, key, blocksJob.id, "?format=json")).json;
    expect(renderAlto(blocks, { filename: "eight.pdf", version: apiVersion })).toBe(alto);

    const charges =
      await svc.sql`SELECT credits, pages FROM credit_ledger WHERE job_id = ${altoJob.id} AND entry = 'charge'`;
    expect(charges.map((c) => [c.credits, c.pages])).toEqual([[24, 8]]);
  }, 400_000);
});
