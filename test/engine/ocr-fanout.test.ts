// Page-parallel OCR (issue 39; docs/scaling.md, "Page-parallel jobs") at the addon: OCR of page
// ranges, each on its own, gives the pages a whole run gives (blocks), and the text layer of
// those ranges applied to the original once (ocrApplyLayer) is the searchable PDF a whole run
// writes, byte for byte. So a job's result cannot depend on how it was split or on how many
// hosts ran it. Needs `bun run build:native`, node_modules and the corpus (qpdf joins pages).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ocrPaths } from "../../src/worker/operations/ocr";
import { hasCorpus } from "../support/corpus";
import { makePdf, run } from "../support/jobs";

const require = createRequire(import.meta.url);
const engine = require(path.join(import.meta.dir, "../../native/index.js"));
const qpdf = run(["qpdf", "--version"]).code === 0;
if (!hasCorpus || !qpdf) console.log("skipping page-parallel OCR engine tests: needs the corpus and qpdf");

let scratch = "";
let input = "";
beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), "engine-ocr-fanout-"));
  if (!hasCorpus || !qpdf) return;
  await engine.ocrInit({ ...ocrPaths(), intraThreads: 1 });
  // Scanned pages around a born-digital one (kept as it is, "has_text"), so ranges meet both.
  input = makePdf(scratch, "mixed.pdf", [
    { file: "scanned-multipage-assembly.pdf", range: "1-2" },
    { file: "latex-outline-4-pages.pdf", range: "1" },
    { file: "scanned-multipage-assembly.pdf", range: "3-4" },
  ]);
}, 60_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ranges = [[0, 1], [2], [3, 4]];

test.skipIf(!hasCorpus || !qpdf)(
  "blocks of page ranges read one by one are the pages of a whole run, in order",
  async () => {
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
    const wholePdf = path.join(scratch, "whole.pdf");
    await engine.ocr(input, wholePdf, { output: "searchable_pdf" });
    const layers: string[] = [];
    for (const [i, pages] of ranges.entries()) {
      const layer = path.join(scratch, `layer-${i}.json`);
      await engine.ocr(input, null, { output: "blocks", pages, layerOutput: layer });
      layers.push(layer);
    }
    // The born-digital page has no layer of its own: it is kept as it is.
    expect(JSON.parse(readFileSync(layers[1]!, "utf8"))).toEqual([]);
    const assembled = path.join(scratch, "assembled.pdf");
    const control = new engine.JobControl();
    const bytes = await engine.ocrApplyLayer(input, assembled, layers, control);
    expect(bytes).toBe(readFileSync(assembled).length);
    expect(control.progress()).toEqual({ done: 3, total: 3 });
    expect(Buffer.compare(readFileSync(assembled), readFileSync(wholePdf))).toBe(0);
  },
  180_000,
);

test.skipIf(!hasCorpus || !qpdf)("ocrApplyLayer refuses a layer for a page the document does not have", async () => {
  const layer = path.join(scratch, "layer-0.json");
  const one = path.join(scratch, "one.pdf");
  makePdf(scratch, "one.pdf", [{ file: "scanned-multipage-assembly.pdf", range: "1" }]);
  const e = await engine.ocrApplyLayer(one, path.join(scratch, "x.pdf"), [layer]).catch((e: any) => e);
  expect(e.code).toBe("invalid_options");
});
