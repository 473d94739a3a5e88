// OCR on pages nobody tuned on (issue 18 item 1): the evaluation set of ocr-eval-set.ts, ours
// (2 threads, one process) and Tesseract 5 (`tesseract IMG stdout -l eng`, two single-threaded
// processes, OMP_THREAD_LIMIT=1) on the same images in the same run. CER in reading order and
// bag-of-words (ocr.bench.ts's definitions) per layout class, per split, per variant, per file;
// then pages/s of both on the same images (ours 2 x 1 thread, Tesseract 2 processes), one round.
// Default: the sample fixed by ocr-eval-set.ts (hash-chosen before any result); `--full`: every page.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bow, cer, cpuOf, pool, runChild, tesseract, twoOfOurs, wallOf } from "./ocr.bench";
import { evalDir, hasEvalSet } from "./eval-set";
import { evalSet, type EvalPage } from "./ocr-eval-set";
import type { BenchContext, BenchSection } from "./run";

/** A page misses when our CER is above this share of Tesseract's on the same image. */
export const MISS_RATIO = 0.75;

export interface Row {
  name: string;
  cls: string;
  split: string;
  variant: string;
  ours: { cer: number; bow: number };
  tesseract: { cer: number; bow: number };
  miss: boolean;
}

const pct = (v: number) => `${(v * 100).toFixed(1)}%`;
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

export function scoreRow(p: EvalPage, ours: string, theirs: string): Row {
  const o = { cer: cer(p.reference, ours), bow: bow(p.reference, ours) };
  const t = { cer: cer(p.reference, theirs), bow: bow(p.reference, theirs) };
  return { name: p.name, cls: p.cls, split: p.split, variant: p.variant, ours: o, tesseract: t, miss: o.cer > MISS_RATIO * t.cer };
}

/** Summary table: one row per group (mean CER and BoW of both engines, their ratio, misses). */
export function summary(rows: Row[], key: (r: Row) => string, title: string): string[] {
  const groups = new Map<string, Row[]>();
  for (const r of rows) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  const line = (k: string, g: Row[]) => {
    const [oc, tc] = [mean(g.map((r) => r.ours.cer)), mean(g.map((r) => r.tesseract.cer))];
    return `| ${k} | ${g.length} | ${pct(oc)} | ${pct(tc)} | ${tc > 0 ? (oc / tc).toFixed(2) : "-"} | ${pct(mean(g.map((r) => r.ours.bow)))} | ${pct(mean(g.map((r) => r.tesseract.bow)))} | ${g.filter((r) => r.miss).length} |`;
  };
  return [
    `| ${title} | pages | ours CER | Tesseract CER | ratio | ours BoW | Tesseract BoW | misses |`,
    "|---|---|---|---|---|---|---|---|",
    ...[...groups.keys()].sort().map((k) => line(k, groups.get(k)!)),
    line("**all**", rows),
  ];
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const title = "OCR evaluation set: ours vs Tesseract 5 -l eng, per layout class and split";
  if (!hasEvalSet()) return { title, markdown: "Skipped: evaluation set missing: run scripts/fetch-eval.sh.", json: { skipped: "evaluation set missing" } };
  const cache = join(ctx.outDir, "ocr-eval");
  mkdirSync(cache, { recursive: true });
  const { pages: all, skipped } = evalSet(evalDir, cache);
  const pages = ctx.full ? all : all.filter((p) => (ctx.quick ? p.quick : p.sampled));
  const images = pages.map((p) => p.image());
  // Both engines at once for accuracy; speed is measured after, one engine at a time.
  const [ours, tess] = await Promise.all([
    runChild(ctx.root, { threads: 2, output: "blocks", files: images, withPages: true }),
    pool(2, images.map((f) => () => tesseract(f))),
  ]);
  const rows = pages.map((p, i) => scoreRow(p, ours.results[i].text, tess[i]!.text));
  // Speed on pages nobody tuned on (the speed work was measured on the 7 pages of
  // ocr.bench.ts): ours 2 processes x 1 thread, then Tesseract 2 single-threaded processes, on
  // the same images, one after the other (as in ocr.bench.ts).
  const oursSpeed = await wallOf(() => twoOfOurs(ctx, images, { threads: 1, output: "blocks" }));
  const tessSpeed = await wallOf(() => pool(2, images.map((f) => () => tesseract(f))));
  const pps = (wall: number) => images.length / (wall / 1000);
  const speed = {
    ours: pps(oursSpeed.wall),
    tesseract: pps(tessSpeed.wall),
    oursCpuMs: cpuOf(oursSpeed.children),
    tesseractCpuMs: cpuOf(tessSpeed.children),
  };
  // Kept for scripts/bench/ocr-eval-replay.ts (re-ordering our lines without re-running OCR).
  writeFileSync(
    join(ctx.outDir, "ocr-eval-run.json"),
    JSON.stringify(pages.map((p, i) => ({ name: p.name, cls: p.cls, split: p.split, variant: p.variant, reference: p.reference, ours: ours.results[i].json, tesseract: tess[i]!.text, row: rows[i] }))),
  );
  const misses = rows.filter((r) => r.miss);
  const md = [
    `${ctx.full ? "Every page" : ctx.quick ? "The quick sample" : "The default sample"} of the OCR evaluation set (scripts/bench/ocr-eval-set.ts, on the evaluation set nobody tunes on of bench/README.md, "Evaluation sets"): ${ctx.full ? "" : `of ${all.length} images, the ${pages.length} chosen by hash before any result (\`bun run bench ocr-eval --full\` runs all); `}every page with text of the born-digital PDFs at 300 dpi (reference: \`pdftotext\`), half of them again at 150 or 200 dpi, turned 0.5-2 degrees, with Gaussian noise (sigma 6-14), half of those as JPEG of quality 50; pages left out: ${Object.entries(skipped).map(([why, n]) => `${n} ${why}`).join(", ")}. Layout class by rule (pdftotext -bbox-layout geometry, script counts, images; see classify()); split of the source PDF (report: first byte of the sha256 of the file >= 128). CER in reading order and BoW as in the OCR section; a page **misses** when our CER > ${MISS_RATIO} x Tesseract's on the same image.`,
    "",
    ...summary(rows, (r) => `${r.cls} / ${r.split}`, "class / split"),
    "",
    ...summary(rows, (r) => r.split, "split"),
    "",
    ...summary(rows, (r) => r.variant, "variant"),
    "",
    `Speed on these ${images.length} pages (not the pages the speed work was measured on): ours 2 processes x 1 thread ${speed.ours.toFixed(2)} pages/s, Tesseract 2 single-threaded processes ${speed.tesseract.toFixed(2)} pages/s: ${(speed.ours / speed.tesseract).toFixed(2)}x; CPU time ours ${(speed.oursCpuMs / 1000).toFixed(1)} s, Tesseract ${(speed.tesseractCpuMs / 1000).toFixed(1)} s: ${(speed.tesseractCpuMs / Math.max(1, speed.oursCpuMs)).toFixed(2)}x (one round, after the accuracy run).`,
    "",
    `Misses (${misses.length} of ${rows.length}): ${misses.map((r) => `${r.name} (${pct(r.ours.cer)} vs ${pct(r.tesseract.cer)})`).join(", ") || "none"}.`,
    "",
    "| image | class | split | ours CER | Tesseract CER | ours BoW | Tesseract BoW | miss |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.name} | ${r.cls} | ${r.split} | ${pct(r.ours.cer)} | ${pct(r.tesseract.cer)} | ${pct(r.ours.bow)} | ${pct(r.tesseract.bow)} | ${r.miss ? "**miss**" : ""} |`),
  ].join("\n");
  return { title, markdown: md, json: { full: ctx.full, quick: ctx.quick, images: pages.length, of: all.length, skipped, speed, rows } };
}
