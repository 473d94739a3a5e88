// OCR languages (issue 18 item 3): our pipeline with the `languages` option against Tesseract with
// the matching traineddata (Debian tesseract-ocr-<lang>), same images, same run.
//
// Pages: the Japanese page of the corpus (files/japanese-tex-dvipdfmx.pdf, rasterised by pdftoppm
// at 300 dpi; reference: its pdftotext text), and one generated page per supported language
// (test/support/lang-pages.ts: known text rendered with a Noto font by Chromium, rasterised at
// 300 dpi, blurred lightly, Gaussian noise and specks added; reference: that text).
// CER = Levenshtein distance / reference length after NFKC; CJK pages (jpn, chi_sim, chi_tra)
// ignore whitespace (those scripts have none between words, and both engines insert some);
// the others collapse whitespace runs to one space and map typographic quotes and dashes.
// Ours runs in one child process (2 intra-op threads) over every page, each with its
// language, so its peak RSS is that of a worker with both recognisers loaded. It writes
// searchable PDFs: their text layer read back by pdftotext is compared with the JSON text
// (item 4: same non-empty lines, whitespace runs as one space; CJK lines without spaces):
// `pdftotext -raw` exactly, and the default mode after its joining of hyphenated line ends.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BenchContext, BenchSection } from "./run";
import { normalise } from "./ocr.bench";
import { cjkLanguages, renderLangPages } from "../../test/support/lang-pages";
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
    for (let j = 1; j <= h.length; j++) cur[j] = Math.min(prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1), prev[j]! + 1, cur[j - 1]! + 1);
    [prev, cur] = [cur, prev];
  }
  return prev[h.length]! / Math.max(1, r.length);
}

function ours(root: string, files: string[], languages: string[][], keepDir: string): Promise<{ results: { ms: number; text: string; engine: string }[]; maxRssKb: number; initMs: number }> {
  return new Promise((resolve, reject) => {
    const job = { threads: 2, output: "searchable_pdf", files, languages, keepDir };
    const p = spawn("bun", [join(root, "scripts/bench/ocr-child.ts"), JSON.stringify(job)], { cwd: root, env: { ...process.env } });
    let out = "";
    let err = "";
    p.stdout.on("data", (d) => (out += d));
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => (code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!)) : reject(new Error(`ocr child failed: ${err}`))));
  });
}

function tesseract(image: string, lang: string): { ms: number; text: string; rssKb: number } {
  const t = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%M", "tesseract", image, "stdout", "-l", lang], { encoding: "utf8", env: { ...process.env, OMP_THREAD_LIMIT: "1" }, maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`tesseract -l ${lang} failed: ${r.stderr}`);
  return { ms: performance.now() - t, text: r.stdout, rssKb: Number(r.stderr.trim().split("\n").at(-1)) };
}

/** `text` as pdftotext's default mode reads it back: a line whose last character is `-`
 * (after trailing spaces) is joined to the next non-empty line, the hyphen dropped. */
export function pdftotextDehyphenated(text: string): string {
  return text.replace(/-[ \t]*\n(?:[ \t]*\n)*[ \t]*(?=\S)/g, "");
}

const pct = (v: number) => `${(v * 100).toFixed(2)}%`;

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
  const langs = ctx.quick ? ["deu", "jpn", "chi_tra"] : ocrLanguages;
  for (const p of renderLangPages(join(dir, "generated"), langs)) pages.push({ name: `generated ${p.lang}`, ...p });

  const pdfDir = join(dir, "searchable");
  mkdirSync(pdfDir, { recursive: true });
  const t0 = performance.now();
  const run = await ours(ctx.root, pages.map((p) => p.png), pages.map((p) => [p.lang]), pdfDir);
  const oursWall = performance.now() - t0;
  const rows = pages.map((p, i) => {
    const o = run.results[i]!;
    const t = tesseract(p.png, p.lang);
    writeFileSync(join(dir, `${p.lang}-${i}.ours.txt`), o.text);
    writeFileSync(join(dir, `${p.lang}-${i}.tesseract.txt`), t.text);
    const pdf = join(pdfDir, basename(p.png));
    const layer = spawnSync("pdftotext", [pdf, "-"], { encoding: "utf8" }).stdout;
    const layerRaw = spawnSync("pdftotext", ["-raw", pdf, "-"], { encoding: "utf8" }).stdout;
    const lines = (s: string) => s.split("\n").map((l) => l.replace(/\s+/g, " ").trim()).filter(Boolean);
    const same = (a: string, b: string) => JSON.stringify(lines(a)) === JSON.stringify(lines(b));
    // Both readings: -raw (the layer's own order, character for character) and the default
    // mode, which joins a line ending in a hyphen to the next line without the hyphen
    // (poppler's TextLine "hyphenated": any PDF's text, ours or Tesseract's, is read so).
    const layerIsJson = same(layerRaw, o.text) && same(layer, pdftotextDehyphenated(o.text));
    return { page: p.name, lang: p.lang, engine: o.engine, oursCer: langCer(p.lang, p.text, o.text), tessCer: langCer(p.lang, p.text, t.text), oursMs: o.ms, tessMs: t.ms, tessRssKb: t.rssKb, layerIsJson };
  });
  const misses = rows.filter((r) => r.oursCer > r.tessCer);
  const mean = (k: "oursCer" | "tessCer") => rows.reduce((a, r) => a + r[k], 0) / Math.max(1, rows.length);
  const table = [
    "| page | language | our model | ours CER | Tesseract CER | ratio | ours s (searchable PDF) | Tesseract s | pdftotext of our layer = JSON |",
    "|---|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.page} | ${r.lang} | ${r.engine} | ${pct(r.oursCer)} | ${pct(r.tessCer)} | ${r.tessCer > 0 ? (r.oursCer / r.tessCer).toFixed(2) : r.oursCer > 0 ? "inf" : "-"} | ${(r.oursMs / 1000).toFixed(2)} | ${(r.tessMs / 1000).toFixed(2)} | ${r.layerIsJson ? "yes" : "**no**"} |`),
    `| **mean** | | | ${pct(mean("oursCer"))} | ${pct(mean("tessCer"))} | ${(mean("oursCer") / Math.max(1e-9, mean("tessCer"))).toFixed(2)} | | | |`,
  ].join("\n");
  const maxTessRss = Math.max(...rows.map((r) => r.tessRssKb));
  const markdown = [
    "Ours with `languages: [<code>]` (one process, 2 threads, every page in turn, so the default and the PP-OCRv6 small recognisers are both loaded) against `tesseract -l <code>` (1 thread) on the same 300-dpi grey PNGs. CJK CER ignores whitespace; all texts NFKC-normalised.",
    "",
    table,
    "",
    `Goal: ours no worse than Tesseract on every page. Pages that miss: ${misses.length ? misses.map((r) => `${r.page} (${pct(r.oursCer)} vs ${pct(r.tessCer)})`).join(", ") : "none"}.`,
    `Text layer read back by pdftotext equal to the JSON text (\`pdftotext -raw\` line for line, and the default mode line for line once a line ending in \`-\` is joined to the next without it, as poppler reads every PDF): ${rows.filter((r) => r.layerIsJson).length} of ${rows.length} pages${rows.some((r) => !r.layerIsJson) ? ` (not: ${rows.filter((r) => !r.layerIsJson).map((r) => r.page).join(", ")})` : ""}.`,
    "",
    `Peak RSS of our process with both recognisers loaded: ${(run.maxRssKb / 1024).toFixed(0)} MB (goal < 1024 MB); Tesseract's largest: ${(maxTessRss / 1024).toFixed(0)} MB. Our model load: ${(run.initMs / 1000).toFixed(2)} s; all pages: ${(oursWall / 1000).toFixed(1)} s wall.`,
  ].join("\n");
  return { title: "OCR languages: ours vs Tesseract traineddata (issue 18 item 3)", markdown, json: { rows, maxRssKb: run.maxRssKb, tesseractMaxRssKb: maxTessRss, misses: misses.map((r) => r.page), layerNotJson: rows.filter((r) => !r.layerIsJson).map((r) => r.page) } };
}
