// Issue 40, item 5 over real HTTP and real workers: `pdfa: "2b"` (extension) on searchable_pdf
// and on ocr with output searchable_pdf writes PDF/A-2b, whole and split into page-range tasks,
// checked rule by rule by test/support/pdfa-check.ts (veraPDF is not in any registry this
// project installs from; see docs/ocr.md, "PDF/A-2b"); a document PDF/A-2b cannot be made of
// fails with conversion_failed naming why, before any page is read; pdfa with another output
// is refused at creation.
import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { corpusDir, hasCorpus } from "../support/service";
import { client } from "../support/service";
import { createJob, download, finishedJob, keyFor, makePdf, qpdfCheck, run, tempDir, uploadOk } from "../support/jobs";
import { pdfaViolations } from "../support/pdfa-check";
import { useService } from "../support/use-service";

const qpdf = run(["qpdf", "--version"]).code === 0;
const ready = hasCorpus && qpdf;
if (!ready) console.log("SKIP: PDF/A API tests: need the corpus and qpdf (scripts/setup-test.sh)");

const svc = useService({ workers: 2, env: { SANDBOX_OCR: "real", OCR_THREADS: "1" } }, 60_000);
const tmp = tempDir();
afterAll(() => tmp.cleanup());
const files = (name: string) => join(corpusDir, "files", name);

async function testKey() {
  const { accountId } = await svc.newKey();
  return (await keyFor(svc, accountId, "test")).key;
}

async function finished(key: string, body: Record<string, unknown>) {
  const created = await createJob(svc, key, body);
  return finishedJob(svc, key, created.id, 300_000);
}

async function saved(key: string, jobId: string, name: string): Promise<string> {
  const d = await download(svc, key, jobId);
  expect(d.status).toBe(200);
  const path = join(tmp.dir, name);
  writeFileSync(path, d.bytes);
  return path;
}

describe.skipIf(!ready)("searchable PDFs as PDF/A-2b", () => {
  test("searchable_pdf with pdfa 2b on a three-page scan passes every rule of the check; the scan itself does not", async () => {
    expect(pdfaViolations(files("scanned-mixed-3-pages.pdf"))).toEqual(
      expect.arrayContaining(["6.2.3: no GTS_PDFA1 output intent", "6.6.2.1: the catalog has no /Metadata stream"]),
    );
    const key = await testKey();
    const file = await uploadOk(svc, key, files("scanned-mixed-3-pages.pdf"));
    const job = await finished(key, { operation: "searchable_pdf", file_id: file.id, options: { pdfa: "2b" } });
    expect({ status: job.status, error: job.error ?? null }).toEqual({ status: "succeeded", error: null });
    expect(job.result.note).toContain("Written as PDF/A-2b.");
    const out = await saved(key, job.id, "mixed-pdfa.pdf");
    expect(pdfaViolations(out)).toEqual([]);
    expect([0, 3]).toContain(qpdfCheck(out).code);
    const text = run(["pdftotext", out, "-"]).out;
    expect((text.match(/[A-Za-z]{4,}/g) ?? []).length).toBeGreaterThan(20);
  }, 300_000);

  test("ocr output searchable_pdf with pdfa 2b, split into tasks, passes every rule of the check", async () => {
    const key = await testKey();
    const eight = makePdf(tmp.dir, "eight.pdf", [
      { file: "scanned-multipage-assembly.pdf" },
      { file: "scanned-multipage-assembly.pdf", range: "1-2" },
    ]);
    const file = await uploadOk(svc, key, eight);
    const job = await finished(key, {
      operation: "ocr",
      file_id: file.id,
      options: { output: "searchable_pdf", pdfa: "2b" },
    });
    expect({ status: job.status, error: job.error ?? null }).toEqual({ status: "succeeded", error: null });
    const tasks = await svc.sql`SELECT status FROM job_tasks WHERE job_id = ${job.id}`;
    expect(tasks.map((t) => t.status)).toEqual(["done", "done"]);
    const out = await saved(key, job.id, "eight-pdfa.pdf");
    expect(pdfaViolations(out)).toEqual([]);
    expect(run(["pdfinfo", out]).out).toMatch(/Pages:\s+8/);
  }, 400_000);

  test("a PDF with a font that is not embedded fails with conversion_failed naming it, before any page is read", async () => {
    const key = await testKey();
    const file = await uploadOk(svc, key, files("libreoffice-form-fields.pdf"));
    const job = await finished(key, { operation: "searchable_pdf", file_id: file.id, options: { pdfa: "2b" } });
    expect(job.status).toBe("failed");
    expect(job.error.code).toBe("conversion_failed");
    expect(job.error.message).toContain("cannot be written as PDF/A-2b");
    expect(job.error.message).toContain("fonts that are not embedded (page 1, font");
    expect(job.error.message).toContain("form fields without appearances");
  }, 120_000);

  test("pdfa with an output other than searchable_pdf, or a level other than 2b, is refused at creation", async () => {
    const key = await testKey();
    const file = await uploadOk(svc, key, files("scanned-mixed-3-pages.pdf"));
    for (const options of [{ pdfa: "2b" }, { output: "hocr", pdfa: "2b" }, { output: "searchable_pdf", pdfa: "1b" }]) {
      const r = await client(svc.baseUrl, key)("POST", "/jobs", { operation: "ocr", file_id: file.id, options });
      expect(r.status).toBe(422);
      expect(r.json.error.code).toBe("invalid_options");
      expect(r.json.error.param).toBe("options.pdfa");
    }
  });
});
