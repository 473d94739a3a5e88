// OCR languages (issues 18 item 3, 40 item 7): our pipeline with the `languages` option against
// Tesseract with the matching traineddata (Debian tesseract-ocr-<lang>), same images, same run.
// For the languages the ONNX recognisers do not read (rus, ell, ara, heb, hin, tha, kor) ours is
// libtesseract itself behind our detector's lines: the rows show what the line layout, the word
// joining and the text layer cost or gain against `tesseract -l <lang>`.
//
// Pages: the Japanese page of the corpus (files/japanese-tex-dvipdfmx.pdf, rasterised by pdftoppm
// at 300 dpi; reference: its pdftotext text), and one generated page per supported language
// (test/support/lang-pages.ts: known text rendered with a Noto font by Chromium, rasterised at
// 300 dpi, blurred lightly, Gaussian noise and specks added; reference: that text). These are
// development pages: the recognisers were chosen and checked on them.
// CER = Levenshtein distance / reference length after NFKC; CJK pages (jpn, chi_sim, chi_tra)
// ignore whitespace (those scripts have none between words, and both engines insert some);
// the others collapse whitespace runs to one space and map typographic quotes and dashes.
//
// Time (bench/README.md rules), whole process only, one language at a time, ours and Tesseract in
// turn (who goes first alternates): ours one process (ocr-child.ts, the worker's settings: T =
// ocrThreads() intra-op threads) reading that language's pages with `languages: [<code>]`,
// Tesseract one process in multi-image mode `-l <code>` over the same pages with
// OMP_THREAD_LIMIT=T (the same thread budget); CPU-seconds beside. No warm figure: ours loads a
// language's recogniser on its first page of that language, inside that page's time, so a
// per-page time after load would not be like against like.
// Text layer and memory: one more process of ours over every page (each with its language, so
// every recogniser ends up loaded: the peak RSS of a worker that has read them all) writes
// searchable PDFs; their text layer read back by pdftotext is compared with that run's JSON text
// (item 4: same non-empty lines, whitespace runs as one space; CJK lines without spaces):
// `pdftotext -raw` exactly, and the default mode after its joining of hyphenated line ends.
// Time: --quick (deu, jpn, chi_tra, rus, ara and the corpus page) about a minute and a half on 2
// idle cores; the default (44 languages) about 6 minutes.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BenchContext, BenchSection } from "./run";
import { normalise } from "./ocr.bench";
import { goalLine, runOurs, tesseractList, workerConfig, type PairRun } from "./ocr-speed";
import { cjkLanguages, langTexts, renderLangPages } from "../../test/support/lang-pages";
import { ocrLanguages } from "../../src/domain/ocr-languages";

export function langCer(lang: string, ref: string, hyp: string): number {
  const prep = (s: string) => {
    const n = s.normalize("NFKC");
    return [...(cjkLanguages.has(lang) ? n.replace(/\s+/g, "") : normalise(n))];
  };
  const r = prep(ref);
  const h = prep(hyp);
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  let cur = new Array<number>(h.length + 1);
  for (let i = 1; i <= r.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= h.length; j++)
      cur[j] = Math.min(prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1), prev[j]! + 1, cur[j - 1]! + 1);
    [prev, cur] = [cur, prev];
  }
  return prev[h.length]! / Math.max(1, r.length);
}

/** `text` as pdftotext's default mode reads it back: a line whose last character is `-`
 * (after trailing spaces) is joined to the next non-empty line, the hyphen dropped. */
export function pdftotextDehyphenated(text: string): string {
  return text.replace(/-[ \t]*\n(?:[ \t]*\n)*[ \t]*(?=\S)/g, "");
}

const pct = (v: number) => `${(v * 100).toFixed(2)}%`;
const s2 = (ms: number) => (ms / 1000).toFixed(2);

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const dir = join(ctx.outDir, "ocr-lang");
  mkdirSync(dir, { recursive: true });
  const pages: { name: string; lang: string; png: string; text: string }[] = [];
  const jp = join(ctx.corpusDir, "files/japanese-tex-dvipdfmx.pdf");
  if (existsSync(jp)) {
    const stem = join(dir, "corpus-japanese-tex");
    spawnSync("pdftoppm", ["-r", "300", "-gray", "-png", "-singlefile", jp, stem]);
    const ref = spawnSync("pdftotext", [jp, "-"], { encoding: "utf8" }).stdout;
    pages.push({ name: "corpus japanese-tex-dvipdfmx (300 dpi)", lang: "jpn", png: `${stem}.png`, text: ref });
  }
  // Every offered language with a test text: the ONNX recognisers' and the Tesseract languages
  // of lang-pages.ts that this machine has installed.
  const langs = ctx.quick ? ["deu", "jpn", "chi_tra", "rus", "ara"] : ocrLanguages.filter((l) => l in langTexts);
  for (const p of renderLangPages(join(dir, "generated"), langs)) pages.push({ name: `generated ${p.lang}`, ...p });

  // Time and texts: per language, ours and Tesseract in turn, whole process each.
  const worker = workerConfig(ctx.outDir);
  const T = worker.threads;
  const byLang = [...new Set(pages.map((p) => p.lang))].map((lang) => ({
    lang,
    pages: pages.filter((p) => p.lang === lang),
  }));
  const timing: {
    lang: string;
    pages: number;
    ours: { ms: number; cpuMs: number; rssKb: number };
    tess: { ms: number; cpuMs: number; rssKb: number };
  }[] = [];
  const oursText = new Map<string, string>();
  const oursEngine = new Map<string, string>();
  const tessText = new Map<string, string>();
  for (const [i, g] of byLang.entries()) {
    console.error(`bench:   ${g.lang}`);
    const files = g.pages.map((p) => p.png);
    const runOursLang = () =>
      runOurs(ctx.root, [files.map((file) => ({ file, turned: false }))], worker, {
        languages: [files.map(() => [g.lang])],
      });
    const runTess = () => tesseractList(files, g.lang, T, join(dir, `list-${g.lang}.txt`));
    let o: PairRun;
    let t: Awaited<ReturnType<typeof runTess>>;
    if (i % 2 === 0) {
      o = await runOursLang();
      t = await runTess();
    } else {
      t = await runTess();
      o = await runOursLang();
    }
    g.pages.forEach((p, j) => {
      oursText.set(p.png, o.texts.get(p.png) ?? "");
      oursEngine.set(p.png, o.children![0].results[j].engine);
      tessText.set(p.png, t.texts[j]!);
    });
    const s = o.slots[0]!;
    timing.push({
      lang: g.lang,
      pages: files.length,
      ours: { ms: s.wallMs, cpuMs: s.cpuMs, rssKb: s.maxRssKb },
      tess: { ms: t.wallMs, cpuMs: t.cpuMs, rssKb: t.maxRssKb },
    });
  }

  // Text layer and peak RSS: one process of ours over every page, each with its language.
  const pdfDir = join(dir, "searchable");
  mkdirSync(pdfDir, { recursive: true });
  console.error("bench:   every language in one process (searchable PDFs)");
  const all = await runOurs(ctx.root, [pages.map((p) => ({ file: p.png, turned: false }))], worker, {
    output: "searchable_pdf",
    keepDir: pdfDir,
    languages: [pages.map((p) => [p.lang])],
  });
  const allRssKb = all.slots[0]!.maxRssKb;

  const rows = pages.map((p, i) => {
    const ours = oursText.get(p.png)!;
    const tess = tessText.get(p.png)!;
    writeFileSync(join(dir, `${p.lang}-${i}.ours.txt`), ours);
    writeFileSync(join(dir, `${p.lang}-${i}.tesseract.txt`), tess);
    const json = all.texts.get(p.png) ?? "";
    const pdf = join(pdfDir, basename(p.png));
    const layer = spawnSync("pdftotext", [pdf, "-"], { encoding: "utf8" }).stdout;
    const layerRaw = spawnSync("pdftotext", ["-raw", pdf, "-"], { encoding: "utf8" }).stdout;
    const lines = (s: string) =>
      s
        .split("\n")
        .map((l) => l.replace(/\s+/g, " ").trim())
        .filter(Boolean);
    const same = (a: string, b: string) => JSON.stringify(lines(a)) === JSON.stringify(lines(b));
    // Both readings: -raw (the layer's own order, character for character) and the default
    // mode, which joins a line ending in a hyphen to the next line without the hyphen
    // (poppler's TextLine "hyphenated": any PDF's text, ours or Tesseract's, is read so).
    const layerIsJson = same(layerRaw, json) && same(layer, pdftotextDehyphenated(json));
    return {
      page: p.name,
      lang: p.lang,
      engine: oursEngine.get(p.png)!,
      oursCer: langCer(p.lang, p.text, ours),
      tessCer: langCer(p.lang, p.text, tess),
      layerIsJson,
    };
  });
  const misses = rows.filter((r) => r.oursCer > r.tessCer);
  const overPoint = rows.filter((r) => (r.oursCer - r.tessCer) * 100 > 1);
  const mean = (k: "oursCer" | "tessCer") => rows.reduce((a, r) => a + r[k], 0) / Math.max(1, rows.length);
  const sum = (f: (t: (typeof timing)[number]) => number) => timing.reduce((a, t) => a + f(t), 0);
  const [oursMs, tessMs, oursCpu, tessCpu] = [
    sum((t) => t.ours.ms),
    sum((t) => t.tess.ms),
    sum((t) => t.ours.cpuMs),
    sum((t) => t.tess.cpuMs),
  ];
  const oursRssKb = Math.max(allRssKb, ...timing.map((t) => t.ours.rssKb));
  const maxTessRss = Math.max(...timing.map((t) => t.tess.rssKb));
  const set = "development pages (the recognisers were chosen on them)";
  const table = [
    "| page | language | our model | ours CER | Tesseract CER | ratio | pdftotext of our layer = JSON |",
    "|---|---|---|---|---|---|---|",
    ...rows.map(
      (r) =>
        `| ${r.page} | ${r.lang} | ${r.engine} | ${pct(r.oursCer)} | ${pct(r.tessCer)} | ${r.tessCer > 0 ? (r.oursCer / r.tessCer).toFixed(2) : r.oursCer > 0 ? "inf" : "-"} | ${r.layerIsJson ? "yes" : "**no**"} |`,
    ),
    `| **mean** | | | ${pct(mean("oursCer"))} | ${pct(mean("tessCer"))} | ${(mean("oursCer") / Math.max(1e-9, mean("tessCer"))).toFixed(2)} | |`,
  ].join("\n");
  const timeTable = [
    "| language | pages | ours whole s | ours CPU s | Tesseract whole s | Tesseract CPU s | ours / Tesseract (wall) |",
    "|---|---|---|---|---|---|---|",
    ...timing.map(
      (t) =>
        `| ${t.lang} | ${t.pages} | ${s2(t.ours.ms)} | ${s2(t.ours.cpuMs)} | ${s2(t.tess.ms)} | ${s2(t.tess.cpuMs)} | ${(t.ours.ms / t.tess.ms).toFixed(2)} |`,
    ),
    `| **all** | ${pages.length} | **${s2(oursMs)}** | **${s2(oursCpu)}** | **${s2(tessMs)}** | **${s2(tessCpu)}** | **${(oursMs / tessMs).toFixed(2)}** |`,
  ].join("\n");
  const markdown = [
    `Ours with \`languages: [<code>]\` against \`tesseract -l <code>\` on the same 300-dpi grey PNGs: ${set}. CJK CER ignores whitespace; all texts NFKC-normalised.`,
    "",
    table,
    "",
    `Time, whole process on both sides, one language at a time (ours and Tesseract in turn): ours one process with the worker's ${T} intra-op threads (Bun, the addon, the default models, the language's recogniser on its first page, every page of the language), Tesseract one process in multi-image mode with OMP_THREAD_LIMIT=${T} (its traineddata, every page of the language). No warm figure: ours loads a language's recogniser inside its first page of that language.`,
    "",
    timeTable,
    "",
    `Text layer: one more process of ours over every page, each with its language (so every recogniser is loaded by its end), writing searchable PDFs; pdftotext of each compared with that run's JSON text (\`pdftotext -raw\` line for line, and the default mode line for line once a line ending in \`-\` is joined to the next without it, as poppler reads every PDF). Peak RSS of that process: ${(allRssKb / 1024).toFixed(0)} MB; Tesseract's largest: ${(maxTessRss / 1024).toFixed(0)} MB.`,
    "",
    "### Goals",
    "",
    goalLine(
      `issue 18 item 3: CER no worse than Tesseract's on every page, ${set}`,
      misses.length === 0,
      misses.length
        ? `worse on ${misses.length} of ${rows.length}: ${misses.map((r) => `${r.page} (${pct(r.oursCer)} vs ${pct(r.tessCer)})`).join(", ")}`
        : `no page worse (${rows.length} pages)`,
    ),
    goalLine(
      `issue 40 item 7: no language worse than Tesseract by more than 1 point of CER, ${set}`,
      overPoint.length === 0,
      overPoint.length
        ? `over 1 point: ${overPoint.map((r) => `${r.page} (${pct(r.oursCer)} vs ${pct(r.tessCer)})`).join(", ")}`
        : `worst ${(Math.max(...rows.map((r) => r.oursCer - r.tessCer)) * 100).toFixed(2)} points`,
    ),
    goalLine(
      "issue 18 item 4: pdftotext of our searchable PDF gives the JSON text, every page",
      rows.every((r) => r.layerIsJson),
      `${rows.filter((r) => r.layerIsJson).length} of ${rows.length}${
        rows.some((r) => !r.layerIsJson)
          ? `; not: ${rows
              .filter((r) => !r.layerIsJson)
              .map((r) => r.page)
              .join(", ")}`
          : ""
      }`,
    ),
    goalLine(
      "issue 18: peak worker RSS under 1 GB with the languages loaded",
      oursRssKb < 1024 * 1024,
      `${(oursRssKb / 1024).toFixed(0)} MB (the process that loaded every recogniser: ${(allRssKb / 1024).toFixed(0)} MB)`,
    ),
  ].join("\n");
  return {
    title: "OCR languages: ours vs Tesseract traineddata (issues 18, 40; development pages)",
    markdown,
    json: {
      set: "development",
      threads: T,
      rows,
      timing,
      total: { oursMs, tessMs, oursCpuMs: oursCpu, tessCpuMs: tessCpu },
      maxRssKb: oursRssKb,
      allLanguagesRssKb: allRssKb,
      tesseractMaxRssKb: maxTessRss,
      misses: misses.map((r) => r.page),
      overOnePoint: overPoint.map((r) => r.page),
      layerNotJson: rows.filter((r) => !r.layerIsJson).map((r) => r.page),
    },
  };
}
