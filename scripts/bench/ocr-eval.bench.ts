// OCR on pages nobody tuned on (issues 18 item 1, 37, 40 item 6): the evaluation set of
// ocr-eval-set.ts, ours and Tesseract 5 (`-l eng`) on the same images in the same run. Goals are
// judged on the report half (every page of the run's sample of it, per page and in the mean,
// naming every page that misses); the tune half is shown beside, never judged.
//
// Speed (ocr-speed.ts, the rules of bench/README.md): on the report half's pages, interleaved
// rounds of ours with the worker's settings (the figure), Tesseract in multi-image mode, and ours
// on the other engine (OCR_OPENVINO=0 on a bfloat16 CPU, =1 elsewhere), P processes each (P = the cores) over the
// same split of the pages, whole process and warm (load reported per process), CPU-seconds
// beside; pages shown turned by their PDF's /Rotate (90, 180, 270: the image is rendered as
// displayed) read by Tesseract with `--psm 1` (the degraded copies' 0.5-2 degrees are skew, read as
// every page is). The tune half
// gets one round of ours and Tesseract, the same way. The texts for accuracy are those of the
// first round: CER in reading order and bag-of-words (ocr.bench.ts's definitions) per layout
// class, per split, per variant, per page.
// Pages: the samples fixed by ocr-eval-set.ts before any result (hash-chosen): `--quick` its quick
// sample, the default its default sample, `--full` every page.
// Time on 2 idle cores: --quick (16 + 16 images, one round) about 2-3 minutes; the default
// (60 + 60 images, two rounds on the report half) about 12-15 minutes; --full hours. The first
// run also builds the set's page facts and images (bench/out/ocr-eval, a few minutes, kept).
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bow, cer } from "./ocr.bench";
import { evalDir, hasEvalSet } from "./eval-set";
import { evalSet, type EvalPage } from "./ocr-eval-set";
import { machine } from "./machine";
import {
  balancedSplit,
  goalLine,
  interleaved,
  pathOf,
  runOurs,
  runTesseract,
  speedGoals,
  speedMethod,
  speedProcesses,
  speedTable,
  stats,
  workerConfig,
  otherEngineConfig,
  type PairRun,
  type SpeedPage,
} from "./ocr-speed";
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
  return {
    name: p.name,
    cls: p.cls,
    split: p.split,
    variant: p.variant,
    ours: o,
    tesseract: t,
    miss: o.cer > MISS_RATIO * t.cer,
  };
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

/** Interleaved rounds on the report half (the tune half gets one); --quick: one. */
const ROUNDS = 2;
const isReport = (p: { split: string }) => p.split === "report";

/** The clockwise turn of a PDF page as displayed (its /Rotate), by pdfinfo. */
function rotationOf(pdf: string, page: number): number {
  const out = spawnSync("pdfinfo", ["-f", String(page), "-l", String(page), pdf], { encoding: "utf8" }).stdout ?? "";
  return Number(new RegExp(`^Page\\s+${page} rot:\\s+(\\d+)`, "m").exec(out)?.[1] ?? 0);
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const title = "OCR evaluation set: ours vs Tesseract 5 -l eng (judged on the report half)";
  if (!hasEvalSet())
    return {
      title,
      markdown: "Skipped: evaluation set missing: run scripts/fetch-eval.sh.",
      json: { skipped: "evaluation set missing" },
    };
  const m = machine();
  const cache = join(ctx.outDir, "ocr-eval");
  mkdirSync(cache, { recursive: true });
  const { pages: all, skipped } = evalSet(evalDir, cache);
  const chosen = ctx.full ? all : all.filter((p) => (ctx.quick ? p.quick : p.sampled));
  const report = chosen.filter(isReport);
  const tune = chosen.filter((p) => !isReport(p));
  const turned = (p: EvalPage) => rotationOf(join(evalDir, "pdf", p.source), p.page) % 360 !== 0;
  const speedPages = (ps: EvalPage[]): SpeedPage[] => ps.map((p) => ({ file: p.image(), turned: turned(p) }));

  const P = speedProcesses();
  const worker = workerConfig(ctx.outDir);
  const ort = otherEngineConfig(ctx.outDir, m);
  const reportSlots = balancedSplit(speedPages(report), P);
  const tuneSlots = balancedSplit(speedPages(tune), P);
  console.error(`bench:   report half: ${report.length} pages`);
  const rounds = ctx.quick ? 1 : ROUNDS;
  const rr = await interleaved(rounds, [
    { key: worker.key, run: () => runOurs(ctx.root, reportSlots, worker, { withPages: true }) },
    { key: "tesseract", run: () => runTesseract(ctx.outDir, reportSlots) },
    { key: ort.key, run: () => runOurs(ctx.root, reportSlots, ort, { withPages: true }) },
  ]);
  console.error(`bench:   tune half: ${tune.length} pages`);
  const tr = tune.length
    ? await interleaved(1, [
        { key: worker.key, run: () => runOurs(ctx.root, tuneSlots, worker, { withPages: true }) },
        { key: "tesseract", run: () => runTesseract(ctx.outDir, tuneSlots) },
      ])
    : null;

  const jsonOf = (r: PairRun, file: string) =>
    r.children!.flatMap((c: any) => c.results).find((x: any) => x.file === file)?.json;
  const score = (ps: EvalPage[], ours: PairRun, tess: PairRun) =>
    ps.map((p) => scoreRow(p, ours.texts.get(p.image()) ?? "", tess.texts.get(p.image()) ?? ""));
  const reportRows = score(report, rr[worker.key]![0]!, rr.tesseract![0]!);
  const tuneRows = tr ? score(tune, tr[worker.key]![0]!, tr.tesseract![0]!) : [];
  const ortRows = score(report, rr[ort.key]![0]!, rr.tesseract![0]!);
  const rows = [...reportRows, ...tuneRows];
  // Kept for scripts/bench/ocr-eval-replay.ts (re-ordering our lines without re-running OCR).
  writeFileSync(
    join(ctx.outDir, "ocr-eval-run.json"),
    JSON.stringify(
      [
        ...report.map((p, i) => ({ p, row: reportRows[i]!, ours: rr[worker.key]![0]!, tess: rr.tesseract![0]! })),
        ...(tr
          ? tune.map((p, i) => ({ p, row: tuneRows[i]!, ours: tr[worker.key]![0]!, tess: tr.tesseract![0]! }))
          : []),
      ].map(({ p, row, ours, tess }) => ({
        name: p.name,
        cls: p.cls,
        split: p.split,
        variant: p.variant,
        reference: p.reference,
        ours: jsonOf(ours, p.image()),
        tesseract: tess.texts.get(p.image()) ?? "",
        row,
      })),
    ),
  );

  const tS = stats(rr.tesseract!, report.length);
  const w = { s: stats(rr[worker.key]!, report.length), path: pathOf(rr[worker.key]![0]!, m) };
  const o = { s: stats(rr[ort.key]!, report.length), path: pathOf(rr[ort.key]![0]!, m) };
  const tuneT = tr ? stats(tr.tesseract!, tune.length) : null;
  const tuneW = tr ? stats(tr[worker.key]!, tune.length) : null;
  const float32 = !m.bf16 ? { label: w.path.label, s: w.s } : { label: o.path.label, s: o.s };
  const bf16 = m.bf16 && w.path.precision === "bfloat16" ? { label: w.path.label, s: w.s } : null;

  const meanCer = (rs: Row[], k: "ours" | "tesseract") => mean(rs.map((r) => r[k].cer));
  const [rOurs, rTess, tOurs, tTess] = [
    meanCer(reportRows, "ours"),
    meanCer(reportRows, "tesseract"),
    meanCer(tuneRows, "ours"),
    meanCer(tuneRows, "tesseract"),
  ];
  const misses = reportRows.filter((r) => r.miss);
  const overPoint = reportRows.filter((r) => (r.ours.cer - r.tesseract.cer) * 100 > 1);
  const set = "report half";
  const pageList = (rs: Row[]) => rs.map((r) => `${r.name} (${pct(r.ours.cer)} vs ${pct(r.tesseract.cer)})`).join(", ");
  const md = [
    `${ctx.full ? "Every page" : ctx.quick ? "The quick sample" : "The default sample"} of the OCR evaluation set (scripts/bench/ocr-eval-set.ts, on the evaluation set nobody tunes on of bench/README.md, "Evaluation sets"): ${report.length} images of the **report** half (judged) and ${tune.length} of the tune half (beside, never judged)${ctx.full ? "" : ` of ${all.length} images, chosen by hash before any result (\`bun run bench ocr-eval --full\` runs all)`}; every page with text of the born-digital PDFs at 300 dpi (reference: \`pdftotext\`), half of them again at 150 or 200 dpi, turned 0.5-2 degrees, with Gaussian noise, half of those as JPEG of quality 50; pages left out: ${Object.entries(
      skipped,
    )
      .map(([why, n]) => `${n} ${why}`)
      .join(
        ", ",
      )}. Layout class by rule (ocr-eval-set.ts classify()); split of the source PDF (report: first byte of the sha256 of the file >= 128). CER in reading order and BoW as in the OCR section; a page **misses** when our CER > ${MISS_RATIO} x Tesseract's on the same image. Ours: the worker settings (${w.path.label} on this CPU).`,
    "",
    ...summary(rows, (r) => r.split, "split"),
    "",
    ...summary(rows, (r) => `${r.cls} / ${r.split}`, "class / split"),
    "",
    ...summary(rows, (r) => r.variant, "variant"),
    "",
    `With ${ort.label} (${o.path.label}) our mean CER on the report half is ${pct(meanCer(ortRows, "ours"))}.`,
    "",
    "### Speed, report half",
    "",
    ...speedTable([
      { label: `**ours, worker settings (${w.path.label})**`, s: w.s, tesseract: tS },
      { label: `ours, ${ort.label} (${o.path.label})`, s: o.s, tesseract: tS },
      { label: `Tesseract 5.3, ${P} x 1 thread`, s: tS },
    ]),
    "",
    speedMethod(P, worker, rounds),
    tuneT && tuneW
      ? `Tune half (${tune.length} pages, one round, beside): ours (worker settings) whole ${tuneW.wholePps.toFixed(2)} pages/s against Tesseract's ${tuneT.wholePps.toFixed(2)} (${(tuneW.wholePps / tuneT.wholePps).toFixed(2)}x), warm ${tuneW.warmPps.toFixed(2)} against ${tuneT.warmPps.toFixed(2)} (${(tuneW.warmPps / tuneT.warmPps).toFixed(2)}x); CPU s whole ${(tuneW.cpuWholeMs / 1000).toFixed(1)} against ${(tuneT.cpuWholeMs / 1000).toFixed(1)}.`
      : "",
    `Machine: ${m.cpu}, ${m.flags.join(" ")}; ${m.bf16 ? "bfloat16 path: the worker settings' row; float32 path: OCR_OPENVINO=0." : "float32 path: both of our rows (default: ONNX Runtime's kernels; OCR_OPENVINO=1: OpenVINO); bfloat16 path: not measured on this CPU (no avx512_bf16/amx)."}`,
    "",
    "### Goals (report half)",
    "",
    goalLine(
      `issue 18/40: mean CER <= 0.75x Tesseract's, ${set}`,
      rOurs <= MISS_RATIO * rTess,
      `${pct(rOurs)} vs ${pct(rTess)}: ${(rOurs / rTess).toFixed(2)}x over ${reportRows.length} pages (tune half, not judged: ${tuneRows.length ? `${pct(tOurs)} vs ${pct(tTess)}: ${(tOurs / tTess).toFixed(2)}x` : "no pages"})`,
    ),
    goalLine(
      `every page: our CER <= 0.75x Tesseract's, ${set}`,
      misses.length === 0,
      misses.length
        ? `${misses.length} of ${reportRows.length} miss: ${pageList(misses)}`
        : `all ${reportRows.length} pages`,
    ),
    goalLine(
      `issue 6: no page more than 1 point of CER worse than Tesseract, ${set}`,
      overPoint.length === 0,
      overPoint.length
        ? `${overPoint.length} of ${reportRows.length} over: ${pageList(overPoint)}`
        : `worst ${(Math.max(...reportRows.map((r) => r.ours.cer - r.tesseract.cer)) * 100).toFixed(2)} points`,
    ),
    ...speedGoals(m, tS, float32, bf16, set),
    goalLine(
      "issue 6/18: peak RSS of an OCR process under 1 GB",
      Math.max(w.s.maxRssKb, o.s.maxRssKb) < 1024 * 1024,
      `${(Math.max(w.s.maxRssKb, o.s.maxRssKb) / 1024).toFixed(0)} MB (every process of ours on the report half; Tesseract's largest ${(tS.maxRssKb / 1024).toFixed(0)} MB)`,
    ),
    "",
    "| image | class | split | ours CER | Tesseract CER | ours BoW | Tesseract BoW | miss |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.cls} | ${r.split} | ${pct(r.ours.cer)} | ${pct(r.tesseract.cer)} | ${pct(r.ours.bow)} | ${pct(r.tesseract.bow)} | ${r.miss ? "**miss**" : ""} |`,
    ),
  ].join("\n");
  return {
    title,
    markdown: md,
    json: {
      full: ctx.full,
      quick: ctx.quick,
      images: chosen.length,
      of: all.length,
      skipped,
      report: {
        pages: report.length,
        oursCer: rOurs,
        tesseractCer: rTess,
        ortCer: meanCer(ortRows, "ours"),
        misses: misses.map((r) => r.name),
        overOnePoint: overPoint.map((r) => r.name),
      },
      tune: { pages: tune.length, oursCer: tOurs, tesseractCer: tTess },
      speed: {
        processes: P,
        rounds,
        worker: { ...w.s, path: w.path },
        workerOrt: { ...o.s, path: o.path },
        tesseract: tS,
        tune: tuneT && tuneW ? { worker: tuneW, tesseract: tuneT } : null,
      },
      rows,
    },
  };
}
