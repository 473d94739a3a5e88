// The addon's OCR exports as the worker uses them: ocrInit verifies model hashes against
// models/manifest.json, ocr refuses to run before a successful init, reads a PNG and a scanned
// PDF, and honours JobControl. Needs `bun run build:native` and node_modules (no network).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ocrPaths } from "../../src/worker/operations/ocr";
import { corpusDir, hasCorpus } from "../support/corpus";
import { minimalPdf } from "../support/pdf";

const require = createRequire(import.meta.url);
const engine = require(path.join(import.meta.dir, "../../native/index.js"));

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(path.join(tmpdir(), "engine-ocr-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

test.skipIf(!hasCorpus)("ocr before ocrInit rejects with ocr_unavailable", async () => {
  const e = await rejection(
    engine.ocr(path.join(corpusDir, "files/phototest-rotated-90.png"), null, { output: "blocks" }),
  );
  expect(e.code).toBe("ocr_unavailable");
});

test("ocrInit refuses a model whose sha256 differs from the manifest", async () => {
  const paths = ocrPaths();
  const manifest = JSON.parse(readFileSync(paths.manifest, "utf8"));
  manifest.models.find((m: any) => m.name === "rec").sha256 = "0".repeat(64);
  const bad = path.join(scratch, "manifest.json");
  writeFileSync(bad, JSON.stringify(manifest));
  const e = await rejection(engine.ocrInit({ ...paths, manifest: bad, intraThreads: 1 }));
  expect(e.code).toBe("ocr_unavailable");
  expect(e.message).toContain("sha256");
});

test("after ocrInit, a page rendered from a self-made PDF is read (no corpus needed)", async () => {
  await engine.ocrInit({ ...ocrPaths(), intraThreads: 1 });
  const pdf = path.join(scratch, "fixture.pdf");
  writeFileSync(pdf, minimalPdf(2, "Fixture"));
  await engine.renderJpeg(pdf, path.join(scratch, "fixture.jpg"), { pages: [1], dpi: 150 });
  const r = await engine.ocr(path.join(scratch, "fixture.jpg"), null, { output: "blocks" });
  expect(r.pagesProcessed).toBe(1);
  expect(JSON.parse(r.json).pages[0].text).toContain("Fixture page 2");
}, 60_000);

test.skipIf(!hasCorpus)(
  "after ocrInit, a PNG turned by 90 degrees is read upright",
  async () => {
    await engine.ocrInit({ ...ocrPaths(), intraThreads: 2 });
    const r = await engine.ocr(path.join(corpusDir, "files/phototest-rotated-90.png"), null, { output: "blocks" });
    expect(r.pageCount).toBe(1);
    expect(r.pagesProcessed).toBe(1);
    const j = JSON.parse(r.json);
    expect(j.pages[0].text_rotation).not.toBe(0);
    expect(j.pages[0].text.replace(/\s+/g, " ")).toContain("The quick brown dog jumped over the lazy fox");
  },
  60_000,
);

test.skipIf(!hasCorpus)("a cancelled control stops ocr with cancelled", async () => {
  const control = new engine.JobControl();
  control.cancel();
  const e = await rejection(
    engine.ocr(path.join(corpusDir, "files/scanned-rotated-4-directions.pdf"), null, { output: "blocks" }, control),
  );
  expect(e.code).toBe("cancelled");
});

test.skipIf(!hasCorpus)("an unknown output kind is invalid_options", async () => {
  const e = await rejection(
    engine.ocr(path.join(corpusDir, "files/phototest-rotated-90.png"), null, { output: "txt" }),
  );
  expect(e.code).toBe("invalid_options");
});
