// The addon's OCR exports as the worker uses them: ocrInit verifies model hashes against
// models/manifest.json, ocr refuses to run before a successful init, reads a PNG and a scanned
// PDF, and honours JobControl; and, last, the page-parallel OCR of page ranges (below). Needs
// `bun run build:native` and node_modules (no network).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { OcrResult } from "../../src/engine/contract";
import { ocrPaths } from "../../src/worker/operations/ocr";
import { optionSamples, runSample, type Shape, shapeMismatches, unsetOptions } from "../support/boundary";
import { corpusDir, hasCorpus } from "../support/corpus";
import { makePdf, run } from "../support/jobs";
import { minimalPdf, withoutSaveId } from "../support/pdf";

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
  const e = await rejection(engine.ocrInit({ ...paths, manifest: bad, intra_threads: 1 }));
  expect(e.code).toBe("ocr_unavailable");
  expect(e.message).toContain("sha256");
});

test("after ocrInit, a page rendered from a self-made PDF is read (no corpus needed)", async () => {
  await engine.ocrInit({ ...ocrPaths(), intra_threads: 1 });
  const pdf = path.join(scratch, "fixture.pdf");
  writeFileSync(pdf, minimalPdf(2, "Fixture"));
  await engine.renderJpeg(pdf, path.join(scratch, "fixture.jpg"), { pages: [1], dpi: 150 });
  const r = await engine.ocr(path.join(scratch, "fixture.jpg"), null, { output: "blocks" });
  expect(r.pages_processed).toBe(1);
  expect(JSON.parse(r.json).pages[0].text).toContain("Fixture page 2");
}, 60_000);

test.skipIf(!hasCorpus)(
  "after ocrInit, a PNG turned by 90 degrees is read upright",
  async () => {
    await engine.ocrInit({ ...ocrPaths(), intra_threads: 2 });
    const r = await engine.ocr(path.join(corpusDir, "files/phototest-rotated-90.png"), null, { output: "blocks" });
    expect(r.page_count).toBe(1);
    expect(r.pages_processed).toBe(1);
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

const qpdf = run(["qpdf", "--version"]).code === 0;
if (!hasCorpus || !qpdf) console.log("skipping the page-parallel OCR tests: they need the corpus and qpdf");

// Page-parallel OCR (issue 39; docs/scaling.md, "Page-parallel jobs"): OCR of page ranges, each
// on its own, gives the pages a whole run gives (blocks), and the text layer of those ranges
// applied to the original once (ocrApplyLayer) is the searchable PDF a whole run writes, byte for
// byte but for the save's random /ID half. So a job's result cannot depend on how it was split or
// on how many hosts ran it. These run after the tests above: ocrInit holds for the process.
let input = "";
const mixedPdf = () => {
  // Scanned pages around a born-digital one (kept as it is, "has_text"), so ranges meet both.
  input ||= makePdf(scratch, "mixed.pdf", [
    { file: "scanned-multipage-assembly.pdf", range: "1-2" },
    { file: "latex-outline-4-pages.pdf", range: "1" },
    { file: "scanned-multipage-assembly.pdf", range: "3-4" },
  ]);
  return input;
};

const ranges = [[0, 1], [2], [3, 4]];

test.skipIf(!hasCorpus || !qpdf)(
  "blocks of page ranges read one by one are the pages of a whole run, in order",
  async () => {
    const input = mixedPdf();
    const whole = JSON.parse((await engine.ocr(input, null, { output: "blocks" })).json);
    const parts = [];
    for (const pages of ranges)
      parts.push(JSON.parse((await engine.ocr(input, null, { output: "blocks", pages })).json));
    expect(whole.pages.length).toBe(5);
    // The born-digital page (and the scan's page 4, which has a text layer) are kept as they are.
    expect(whole.pages.filter((p: any) => !p.ocr).map((p: any) => p.page)).toEqual([2, 4]);
    expect(parts.flatMap((p) => p.pages)).toEqual(whole.pages);
    expect(new Set(parts.map((p) => p.engine))).toEqual(new Set([whole.engine]));
  },
  180_000,
);

test.skipIf(!hasCorpus || !qpdf)(
  "the text layers of page ranges applied once to the original are the whole run's searchable PDF, byte for byte",
  async () => {
    const input = mixedPdf();
    const wholePdf = path.join(scratch, "whole.pdf");
    await engine.ocr(input, wholePdf, { output: "searchable_pdf" });
    const layers: string[] = [];
    for (const [i, pages] of ranges.entries()) {
      const layer = path.join(scratch, `layer-${i}.json`);
      await engine.ocrLayerPages(input, layer, { output: "blocks", pages });
      layers.push(layer);
    }
    // The born-digital page has no layer of its own: it is kept as it is.
    expect(JSON.parse(readFileSync(layers[1]!, "utf8"))).toEqual([]);
    const assembled = path.join(scratch, "assembled.pdf");
    const control = new engine.JobControl();
    const bytes = await engine.ocrApplyLayer(input, assembled, layers, null, control);
    expect(bytes).toBe(readFileSync(assembled).length);
    expect(control.progress()).toEqual({ done: 3, total: 3 });
    expect(readFileSync(assembled).length).toBe(readFileSync(wholePdf).length);
    expect(withoutSaveId(readFileSync(assembled)) === withoutSaveId(readFileSync(wholePdf))).toBe(true);
  },
  180_000,
);

test.skipIf(!hasCorpus || !qpdf)(
  "with rotate_pages and deskew, the text layers of page ranges applied once are the whole run's searchable PDF, byte for byte",
  async () => {
    // Two turned scan pages, a born-digital page (kept as it is) and a skewed scan.
    const turned = makePdf(scratch, "turned.pdf", [
      { file: "scanned-rotated-4-directions.pdf", range: "2-3" },
      { file: "latex-outline-4-pages.pdf", range: "1" },
      { file: "scanned-skewed-two-column.pdf", range: "1" },
    ]);
    const turn = { rotate_pages: true, deskew: true };
    const wholePdf = path.join(scratch, "turned-whole.pdf");
    await engine.ocr(turned, wholePdf, { output: "searchable_pdf", ...turn });
    const layers: string[] = [];
    for (const [i, pages] of [[0, 1], [2], [3]].entries()) {
      const layer = path.join(scratch, `turned-layer-${i}.json`);
      await engine.ocrLayerPages(turned, layer, { output: "blocks", pages });
      layers.push(layer);
    }
    const assembled = path.join(scratch, "turned-assembled.pdf");
    await engine.ocrApplyLayer(turned, assembled, layers, turn);
    expect(withoutSaveId(readFileSync(assembled)) === withoutSaveId(readFileSync(wholePdf))).toBe(true);
    // The options changed the document: without them the same layers give another one.
    const plain = path.join(scratch, "turned-plain.pdf");
    await engine.ocrApplyLayer(turned, plain, layers, null);
    expect(withoutSaveId(readFileSync(plain)) === withoutSaveId(readFileSync(wholePdf))).toBe(false);
  },
  240_000,
);

test.skipIf(!hasCorpus || !qpdf)("ocrApplyLayer refuses a layer for a page the document does not have", async () => {
  const layer = path.join(scratch, "layer-0.json");
  const one = path.join(scratch, "one.pdf");
  makePdf(scratch, "one.pdf", [{ file: "scanned-multipage-assembly.pdf", range: "1" }]);
  const e = await engine.ocrApplyLayer(one, path.join(scratch, "x.pdf"), [layer]).catch((e: any) => e);
  expect(e.code).toBe("invalid_options");
});

// The boundary (test/engine/contract.test.ts for the other operations): every option of ocr's and
// searchable_pdf's schemas goes through their executor into the engine, whose OcrOptions refuses
// a field it does not take; each OCR result has the fields and kinds of its type.
test("every option of ocr and searchable_pdf reaches the engine through the executor", async () => {
  const pdf = path.join(scratch, "boundary.pdf");
  writeFileSync(pdf, minimalPdf(1, "Boundary"));
  const jpg = path.join(scratch, "boundary.jpg");
  await engine.renderJpeg(pdf, jpg, { dpi: 150 });
  for (const op of ["ocr", "searchable_pdf"] as const) {
    expect([op, ...unsetOptions(op)]).toEqual([op]);
    for (const sample of optionSamples.filter((s) => s.operation === op)) {
      const out = await runSample(sample, [{ path: jpg, kind: "jpeg" }], scratch);
      expect(out.pages_processed).toBe(1);
      expect(out.result).toMatchObject({ type: "file", note: expect.stringContaining("PDF/A-2b") });
    }
  }
  const refused = await rejection(engine.ocr(jpg, null, { output: "blocks", mode: "base" }));
  expect([refused.code, refused.message.includes("mode")]).toEqual(["invalid_options", true]);
}, 120_000);

test("ocr, ocrLayerPages and ocrApplyLayer resolve to the types of src/engine/contract.ts", async () => {
  const pdf = path.join(scratch, "shape.pdf");
  writeFileSync(pdf, minimalPdf(1, "Shape"));
  const shape: Shape<OcrResult> = {
    page_count: "number",
    pages_processed: "number",
    json: "string",
    output_bytes: "number",
  };
  const whole = await engine.ocr(pdf, path.join(scratch, "shape-ocr.pdf"), { output: "searchable_pdf" });
  expect(shapeMismatches<OcrResult>(whole, shape)).toEqual([]);
  const layer = path.join(scratch, "shape-layer.json");
  expect(shapeMismatches<OcrResult>(await engine.ocrLayerPages(pdf, layer, { output: "blocks" }), shape)).toEqual([]);
  expect(typeof (await engine.ocrApplyLayer(pdf, path.join(scratch, "shape-applied.pdf"), [layer]))).toBe("number");
}, 60_000);
