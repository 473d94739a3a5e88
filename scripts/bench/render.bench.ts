// Rasterisation to JPEG, both sides whole processes on the same pages at the same DPI and JPEG
// quality: ours (examples/pagework `render`, one process writing the pages' JPEGs) beside
// `pdftoppm -jpeg`, `gs -sDEVICE=jpeg` and `mutool draw -c rgb` to raw PNM (the raster alone,
// no encoding). One thread, and all cores: ours with that many render threads, each reference
// tool (single-threaded) as that many processes on equal shares of the pages, started together.
// Median against median and mean against mean of interleaved runs; CPU-seconds beside wall time.
// Goals judged on a sample of the report half of the evaluation set; the corpus files follow as
// the development table. Default: 12 report-half files, 72/150/300 dpi, 3 runs, about 10 minutes
// on 2 cores; --quick: 3 files at 150 dpi, 2 runs, about 30 s.
import { mkdirSync, rmSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import type { BenchContext, BenchSection } from "./run";
import { reportHalf, verdict } from "./eval-pick";
import { f1, f2, median, pagework, pct, timed, timedOut, timedTogether, timeLimitS, type Timed } from "./pagework-lib";

const SIDES = ["ours", "pdftoppm", "gs", "mutool"] as const;
type Side = (typeof SIDES)[number];
const QUALITY = 85;

interface Row {
  set: "report" | "development";
  file: string;
  dpi: number;
  pages: number;
  threads: number;
  /** Per side: wall ms of every run, their median and mean, median CPU-seconds, peak RSS. */
  sides: Record<Side, { runs: number[]; median: number; mean: number; cpuS: number; rssMb: number; error: string }>;
}

/** `parts` contiguous 1-based page ranges covering 1..n (fewer when n < parts). */
function ranges(n: number, parts: number): [number, number][] {
  const k = Math.min(parts, n),
    out: [number, number][] = [];
  for (let i = 0, a = 1; i < k; i++) {
    const len = Math.floor(n / k) + (i < n % k ? 1 : 0);
    out.push([a, a + len - 1]);
    a += len;
  }
  return out;
}

function firstError(t: Timed, limitS: number): string {
  if (t.code === 0) return "";
  if (timedOut(t.code, limitS)) return timedOut(t.code, limitS);
  const lines = t.out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /error|unable|invalid|fail/i.test(l)) ?? lines[lines.length - 1] ?? "";
  return `exit ${t.code}: ${line.slice(0, 140)}`;
}

async function measure(
  bin: string,
  input: string,
  dpi: number,
  pages: number,
  threads: number,
  reps: number,
  dir: string,
  limitS: number,
): Promise<Row["sides"]> {
  const r = ranges(pages, threads);
  const t = ["timeout", String(limitS)];
  const cmd: Record<Side, () => Promise<Timed>> = {
    ours: async () =>
      timed([...t, bin, "render", input, join(dir, "ours.zip"), String(dpi), String(QUALITY), `0,${pages - 1}`], {
        RENDER_THREADS: String(threads),
      }),
    // Each tool with the options its manual gives for this output: the same JPEG quality as
    // ours; Ghostscript with anti-aliasing on (as MuPDF and poppler render by default).
    pdftoppm: () =>
      timedTogether(
        r.map(([a, b], k) => [
          ...t,
          "pdftoppm",
          "-jpeg",
          "-jpegopt",
          `quality=${QUALITY}`,
          "-r",
          String(dpi),
          "-f",
          String(a),
          "-l",
          String(b),
          input,
          join(dir, `p${k}`),
        ]),
      ),
    gs: () =>
      timedTogether(
        r.map(([a, b], k) => [
          ...t,
          "gs",
          "-q",
          "-dNOPAUSE",
          "-dBATCH",
          "-dSAFER",
          "-sDEVICE=jpeg",
          `-dJPEGQ=${QUALITY}`,
          "-dTextAlphaBits=4",
          "-dGraphicsAlphaBits=4",
          `-r${dpi}`,
          `-dFirstPage=${a}`,
          `-dLastPage=${b}`,
          `-sOutputFile=${join(dir, `g${k}-%d.jpg`)}`,
          input,
        ]),
      ),
    mutool: () =>
      timedTogether(
        r.map(([a, b], k) => [
          ...t,
          "mutool",
          "draw",
          "-q",
          "-r",
          String(dpi),
          "-c",
          "rgb",
          "-o",
          join(dir, `m${k}-%d.pnm`),
          input,
          `${a}-${b}`,
        ]),
      ),
  };
  const runs = Object.fromEntries(SIDES.map((s) => [s, [] as Timed[]])) as Record<Side, Timed[]>;
  for (let i = 0; i < reps; i++) {
    for (const s of SIDES) {
      // A failed run is not repeated: one that hung would only hang again.
      if (runs[s].some((x) => x.code !== 0)) continue;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      runs[s].push(await cmd[s]());
    }
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return Object.fromEntries(
    SIDES.map((s) => {
      const ms = runs[s].map((t) => t.ms);
      return [
        s,
        {
          runs: ms,
          median: median(ms),
          mean: ms.reduce((a, b) => a + b, 0) / ms.length,
          cpuS: median(runs[s].map((t) => t.cpuS)),
          rssMb: Math.max(...runs[s].map((t) => t.rssMb)),
          error: runs[s].map((x) => firstError(x, limitS)).find(Boolean) ?? "",
        },
      ];
    }),
  ) as Row["sides"];
}

function table(rows: Row[]): string[] {
  const ok = (r: Row, s: Side) => !r.sides[s].error;
  const ratio = (r: Row, s: Side, k: "median" | "mean") =>
    ok(r, "ours") && ok(r, s) ? f2(r.sides.ours[k] / r.sides[s][k]) : "—";
  const cell = (r: Row, s: Side) =>
    ok(r, s) ? `${f1(r.sides[s].median)} / ${f1(r.sides[s].mean)} (${f2(r.sides[s].cpuS)})` : "failed";
  return [
    "| file | dpi | pages | threads | ours ms median / mean (CPU s) | pdftoppm -jpeg | gs jpeg | mutool -c rgb PNM | ours/pdftoppm median, mean | ours/gs median, mean | ours/mutool median, mean |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.file} | ${r.dpi} | ${r.pages} | ${r.threads} | ${cell(r, "ours")} | ${cell(r, "pdftoppm")} | ${cell(r, "gs")} | ${cell(r, "mutool")} | ${ratio(r, "pdftoppm", "median")}, ${ratio(r, "pdftoppm", "mean")} | ${ratio(r, "gs", "median")}, ${ratio(r, "gs", "mean")} | ${ratio(r, "mutool", "median")}, ${ratio(r, "mutool", "mean")} |`,
    ),
  ];
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const bin = pagework(ctx.root);
  const dir = join(ctx.outDir, "render");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const all = cpus().length;
  const threads = all > 1 ? [1, all] : [1];
  const dpis = ctx.quick ? [150] : [72, 150, 300];
  const reps = ctx.quick ? 2 : 3;
  const maxPages = (dpi: number) => (ctx.quick ? 8 : dpi === 300 ? 10 : 20);

  const half = reportHalf({ quick: ctx.quick, full: ctx.full, quickN: 3, defaultN: 12 });
  const c = (n: string) => join(ctx.corpusDir, "files", n);
  const dev = ctx.quick
    ? ["geotopo-117-pages.pdf", "freeculture-book-352-pages.pdf"]
    : ["geotopo-117-pages.pdf", "freeculture-book-352-pages.pdf", "scanned-multipage-assembly.pdf"];
  const inputs = [
    ...half.files.map((f) => ({ set: "report" as const, file: f.name, path: f.path, pages: f.pages })),
    ...dev.map((n) => ({ set: "development" as const, file: n, path: c(n), pages: 0 })),
  ];
  const rows: Row[] = [];
  const skipped: string[] = [];
  for (const inp of inputs) {
    let pages = inp.pages;
    if (!pages) {
      const m = /^Pages:\s+(\d+)/m.exec(Bun.spawnSync(["pdfinfo", inp.path]).stdout.toString());
      pages = m ? Number(m[1]) : 0;
    }
    if (pages < 1) {
      skipped.push(`${inp.file} (no page count)`);
      continue;
    }
    for (const dpi of dpis) {
      const n = Math.min(pages, maxPages(dpi));
      for (const t of threads)
        rows.push({
          set: inp.set,
          file: inp.file,
          dpi,
          pages: n,
          threads: t,
          sides: await measure(bin, inp.path, dpi, n, t, reps, dir, timeLimitS(ctx.quick)),
        });
    }
  }

  // Ours on all cores against ours on one (the same whole job) on a multi-page document.
  const book = c("freeculture-book-352-pages.pdf");
  const n = ctx.quick ? 30 : 120;
  const ones: number[] = [],
    alls: number[] = [];
  for (let r = 0; r < (ctx.quick ? 2 : 3); r++) {
    ones.push(
      timed([bin, "render", book, join(dir, "t1.zip"), "150", String(QUALITY), `0,${n - 1}`], { RENDER_THREADS: "1" })
        .ms,
    );
    alls.push(
      timed([bin, "render", book, join(dir, "t2.zip"), "150", String(QUALITY), `0,${n - 1}`], {
        RENDER_THREADS: String(all),
      }).ms,
    );
  }
  const speedup = median(ones) / median(alls);
  // Peak RSS of rendering the whole 352-page book at 150 dpi on all cores.
  const whole = timed([bin, "render", book, join(dir, "book.zip"), "150", String(QUALITY)]);
  // The JPEG encoders, ours against ours, both warm in one process (examples/pagework pagetimes).
  let encoder = "";
  let encoderJson: unknown = null;
  if (!ctx.quick) {
    const geo = c("geotopo-117-pages.pdf");
    const enc = (e: string) =>
      JSON.parse(
        timed([bin, "pagetimes", geo, "150", String(QUALITY), "0", "19"], { ENGINE_JPEG: e }).out.split("\n")[0]!,
      );
    const rust = enc("rust"),
      turbo = enc("turbo");
    encoderJson = { rustP50: pct(rust.ms, 50), turboP50: pct(turbo.ms, 50) };
    encoder = `Our JPEG encoders (ours against ours, both warm, the document open), geotopo pages 1-20 at 150 dpi, one thread, per-page median ms (total / encode): jpeg-encoder (pure Rust, fallback) ${f1(pct(rust.ms, 50))} / ${f1(pct(rust.encode_ms, 50))}; libjpeg-turbo (default when installed) ${f1(pct(turbo.ms, 50))} / ${f1(pct(turbo.encode_ms, 50))}.`;
  }
  rmSync(dir, { recursive: true, force: true });

  // Goals at 150 dpi on the report half, per file, median against median of whole processes.
  const judged = rows.filter((r) => r.set === "report" && r.dpi === 150);
  const failed = rows.filter((r) => SIDES.some((s) => r.sides[s].error));
  const one = judged.filter((r) => r.threads === 1 && !r.sides.ours.error);
  const ratioOf = (r: Row, s: Side) => r.sides.ours.median / r.sides[s].median;
  const overMutool = one.filter((r) => !r.sides.mutool.error && !(ratioOf(r, "mutool") <= 1.5));
  const notFaster = one.filter((r) =>
    SIDES.slice(1, 3).some((s) => !r.sides[s as Side].error && !(ratioOf(r, s as Side) < 1)),
  );
  const oursFailed = judged.filter((r) => r.sides.ours.error);
  const sum = (rs: Row[], s: Side) => rs.reduce((a, r) => a + r.sides[s].median, 0);
  const inSum = (s: Side) => f2(sum(one, "ours") / sum(one, s));
  // The cores' speed-up per report-half file where there are pages enough to share.
  const multi = judged
    .filter((r) => r.threads === 1 && r.pages >= 8)
    .map((r) => {
      const m = judged.find((x) => x.file === r.file && x.threads === all)!;
      return { file: r.file, pages: r.pages, speedup: r.sides.ours.median / m.sides.ours.median };
    });
  const missing = half.missing;
  const v = (ok: boolean) => verdict(ok, missing);
  const named = (rs: Row[], s: Side) => rs.map((r) => `${r.file} ${f2(ratioOf(r, s))}`).join(", ");
  const goals = missing
    ? []
    : [
        `- **150 dpi, one thread: ours within 1.5x of \`mutool draw -c rgb\` to PNM** (whole process both sides, median against median, per file): ${inSum("mutool")} in sum over ${one.length} files ${v(overMutool.length === 0 && oursFailed.length === 0)}${overMutool.length ? `; over 1.5x on ${named(overMutool, "mutool")}` : ""}.`,
        `- **150 dpi, one thread: faster than \`pdftoppm -jpeg\` and \`gs -sDEVICE=jpeg\`** (per file): ours/pdftoppm ${inSum("pdftoppm")}, ours/gs ${inSum("gs")} in sum ${v(notFaster.length === 0 && oursFailed.length === 0)}${notFaster.length ? `; not faster on ${notFaster.map((r) => `${r.file} (pdftoppm ${f2(ratioOf(r, "pdftoppm"))}, gs ${f2(ratioOf(r, "gs"))})`).join(", ")}` : ""}.`,
        `- **All ${all} cores at least 1.7x one thread's pages/s on a multi-page document**: report-half files with 8 pages or more: ${multi.length ? `${multi.map((x) => `${x.file} ${f2(x.speedup)}x`).join(", ")} ${v(multi.every((x) => x.speedup >= 1.7))}` : "none in this sample (judged on the book below only)"}; the corpus book (${n} pages, whole job, median of interleaved runs): **${f2(speedup)}x** ${verdict(speedup >= 1.7)}.`,
        `- **Peak RSS rendering the whole 352-page corpus book at 150 dpi under 400 MB** (the goal names that file): ${f1(whole.rssMb)} MB in ${f2(whole.ms / 1000)} s ${verdict(whole.rssMb < 400)}.`,
        `- Files ours could not render: ${oursFailed.length ? oursFailed.map((r) => `${r.file} (${r.sides.ours.error})`).join("; ") : "none"}.`,
      ];
  const markdown = [
    `Whole processes on both sides (start, open, render, encode, write), the same pages (1 to N), DPI and JPEG quality (${QUALITY}); ours = \`examples/pagework render\` writing the pages' JPEGs into one ZIP; pdftoppm and gs write one JPEG per page (gs with \`-dTextAlphaBits=4 -dGraphicsAlphaBits=4\`, anti-aliased as MuPDF and poppler are); \`mutool draw -c rgb\` writes raw PNM (the cost of the raster alone). Threads: with ${all}, ours runs ${all} render threads and each reference tool ${all} processes on equal shares of the pages, started together. Median and mean of ${reps} interleaved runs (ours, pdftoppm, gs, mutool, repeated; a run over ${timeLimitS(ctx.quick)} s is stopped and counted as failed); CPU-seconds (median) in brackets. Per-page figures are not given: the per-page time of a whole process is its wall time over N.`,
    "",
    half.line,
    "",
    ...(half.missing ? [] : ["**Goals** (issue 5), at 150 dpi, judged on the report half:", ""]),
    ...goals,
    ...(missing
      ? [`- The book's figures (development set): cores ${f2(speedup)}x one thread, peak RSS ${f1(whole.rssMb)} MB.`]
      : []),
    "",
    ...(missing ? [] : ["Report half:", "", ...table(rows.filter((r) => r.set === "report")), ""]),
    "### Development set (the corpus files the renderer was tuned on)",
    "",
    ...table(rows.filter((r) => r.set === "development")),
    "",
    `Cores: ${n} pages of the book at 150 dpi, ours whole job, 1 thread ${ones.map((x) => f1(x)).join(", ")} ms, ${all} threads ${alls.map((x) => f1(x)).join(", ")} ms (interleaved).`,
    ...(encoder ? ["", encoder] : []),
    ...(failed.length || skipped.length
      ? [
          "",
          `Not rendered: ${[...failed.flatMap((r) => SIDES.filter((s) => r.sides[s].error).map((s) => `${s} on ${r.file} at ${r.dpi} dpi, ${r.threads} thread(s): ${r.sides[s].error}`)), ...skipped].join("; ")}.`,
        ]
      : []),
  ].join("\n");
  return {
    title: "Render: PDF pages to JPEG",
    markdown,
    json: {
      evalSet: missing ? "missing" : { files: half.files.length, total: half.total },
      rows,
      speedup: { pages: n, ones, alls, speedup },
      book: { ms: whole.ms, rssMb: whole.rssMb },
      encoder: encoderJson,
    },
  };
}
