// OCR languages (issues 18 item 3, 40 item 7): our pipeline with the `languages` option against
// Tesseract with the matching traineddata (Debian tesseract-ocr-<lang>), same images, same run.
// For the languages the ONNX recognisers do not read (rus, ell, ara, heb, hin, tha, kor) ours is
// libtesseract itself behind our detector's lines: the rows show what the line layout, the word
// joining and the text layer cost or gain against `tesseract -l <lang>`.
//
// Two sets of pages. The judged one is the translation set (ocr-lang-set.ts; bench/README.md, "OCR
// language set"): per offered language SET_PAGES pages of Debian's translations that nobody tuned
// on, at 150-300 dpi, turned and noisy, from the report half (`--tune`: the tune half, for
// choosing settings). Goals of issue 40 items 7 and 3 are judged per language on it: CER against
// `tesseract -l <code>`, right-to-left text in logical order (JSON and text layer), no spaces
// inserted inside a line of Thai, Indic or CJK text. Beside it the development pages: the Japanese
// page of the corpus (files/japanese-tex-dvipdfmx.pdf, rasterised by pdftoppm at 300 dpi;
// reference: its pdftotext text), and one generated page per supported language
// (test/support/lang-pages.ts: known text rendered with a Noto font by Chromium, rasterised at
// 300 dpi, blurred lightly, Gaussian noise and specks added; reference: that text): the
// recognisers were chosen and checked on them.
// CER = Levenshtein distance / reference length after NFKC; CJK pages (jpn, chi_sim, chi_tra)
// ignore whitespace (those scripts have none between words, and both engines insert some);
// the others collapse whitespace runs to one space and map typographic quotes and dashes. The
// translation set also gives every language's CER without whitespace.
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
// left to right `pdftotext -raw` exactly and the default mode after its joining of hyphenated
// line ends; right to left the default mode without its bidi marks (-raw reads any right-to-left
// line one word per line); beside it `mutool draw -F txt` (left to right only).
// Time: --quick (development pages of deu, jpn, chi_tra, rus, ara and the corpus page, one
// translation page of each of QUICK_SET_LANGS) a few minutes on 2 cores; the default (every
// offered language) about half an hour.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { BenchContext, BenchSection } from "./run";
import { normalise } from "./ocr.bench";
import { goalLine, runOurs, tesseractList, workerConfig, type PairRun } from "./ocr-speed";
import { cjkLanguages, langTexts, renderLangPages } from "../../test/support/lang-pages";
import { ocrLanguages } from "../../src/domain/ocr-languages";
import { renderSetPages, RTL, SPACE_CHECKED, textPackages, type Split } from "./ocr-lang-set";

/** A page's text as CER compares it: NFKC; whitespace dropped in CJK (`noSpace`, or always for
 * the CER without whitespace), else runs of it one space and typographic quotes and dashes mapped. */
function cerChars(lang: string, s: string, noSpace = false): string[] {
  const n = s.normalize("NFKC");
  return [...(noSpace || cjkLanguages.has(lang) ? n.replace(/\s+/g, "") : normalise(n))];
}

function levenshtein(r: string[], h: string[]): number {
  let prev = Array.from({ length: h.length + 1 }, (_, j) => j);
  let cur = new Array<number>(h.length + 1);
  for (let i = 1; i <= r.length; i++) {
    cur[0] = i;
    for (let j = 1; j <= h.length; j++)
      cur[j] = Math.min(prev[j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1), prev[j]! + 1, cur[j - 1]! + 1);
    [prev, cur] = [cur, prev];
  }
  return prev[h.length]!;
}

/** Edit distance and reference length of `hyp` against `ref` (CER = errors / chars). */
export function langErrors(lang: string, ref: string, hyp: string, noSpace = false): { errors: number; chars: number } {
  const r = cerChars(lang, ref, noSpace);
  return { errors: levenshtein(r, cerChars(lang, hyp, noSpace)), chars: r.length };
}

export function langCer(lang: string, ref: string, hyp: string): number {
  const { errors, chars } = langErrors(lang, ref, hyp);
  return errors / Math.max(1, chars);
}

/** Spaces `hyp` puts inside a line where `ref` has none: `hyp`'s spaces that a minimal character
 * alignment leaves unmatched or matches to a non-space of `ref`. A line break is no space (each
 * line of `hyp` is joined to the next without one), so only spaces within a line count: what
 * splits a Thai word, an Indic conjunct or a run of CJK characters. */
export function insertedSpaces(ref: string, hyp: string): number {
  const r = [...ref.normalize("NFKC").replace(/\s+/g, " ").trim()];
  const h = [
    ...hyp
      .normalize("NFKC")
      .split("\n")
      .map((l) => l.replace(/\s+/g, " ").trim())
      .join(""),
  ];
  const w = h.length + 1;
  const d = new Uint32Array((r.length + 1) * w);
  for (let j = 0; j <= h.length; j++) d[j] = j;
  for (let i = 1; i <= r.length; i++) {
    d[i * w] = i;
    for (let j = 1; j <= h.length; j++)
      d[i * w + j] = Math.min(
        d[(i - 1) * w + j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1),
        d[(i - 1) * w + j]! + 1,
        d[i * w + j - 1]! + 1,
      );
  }
  let [i, j, n] = [r.length, h.length, 0];
  while (j > 0) {
    const here = d[i * w + j]!;
    if (i > 0 && here === d[(i - 1) * w + j - 1]! + (r[i - 1] === h[j - 1] ? 0 : 1)) {
      if (h[j - 1] === " " && r[i - 1] !== " ") n++;
      i--;
      j--;
    } else if (i > 0 && here === d[(i - 1) * w + j]! + 1) i--;
    else {
      if (h[j - 1] === " ") n++;
      j--;
    }
  }
  return n;
}

/** Each line's characters in reverse: what a reader that kept the visual order of a right-to-left
 * line would have written. */
export function reverseLines(text: string): string {
  return text
    .split("\n")
    .map((l) => [...l].reverse().join(""))
    .join("\n");
}

/** Whether `hyp` reads `ref`'s right-to-left text in logical order: closer to it as it is than
 * with every line reversed. */
export function logicalOrder(lang: string, ref: string, hyp: string): boolean {
  return langCer(lang, ref, hyp) < langCer(lang, ref, reverseLines(hyp));
}

/** Whether two texts have the same non-empty lines, whitespace runs as one space. */
export function sameLines(a: string, b: string): boolean {
  const lines = (s: string) =>
    s
      .split("\n")
      .map((l) => l.replace(/\s+/g, " ").trim())
      .filter(Boolean);
  return JSON.stringify(lines(a)) === JSON.stringify(lines(b));
}

/** Whether each non-empty line of `a` has the characters of the same line of `b`, whitespace
 * aside, in any order. */
export function sameCharsPerLine(a: string, b: string): boolean {
  const lines = (s: string) =>
    s
      .split("\n")
      .map((l) => [...l.replace(/\s+/g, "")].sort().join(""))
      .filter(Boolean);
  return JSON.stringify(lines(a)) === JSON.stringify(lines(b));
}

/** `text` without the bidi marks and embeddings (U+200E, U+200F, U+202A-U+202E, U+2066-U+2069)
 * pdftotext's default mode wraps right-to-left runs and the numbers inside them in. */
export function withoutBidiMarks(text: string): string {
  return text.replace(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, "");
}

/** `text` as pdftotext's default mode reads it back: a line whose last character is `-`
 * (after trailing spaces) is joined to the next non-empty line, the hyphen dropped. */
export function pdftotextDehyphenated(text: string): string {
  return text.replace(/-[ \t]*\n(?:[ \t]*\n)*[ \t]*(?=\S)/g, "");
}

const pct = (v: number) => `${(v * 100).toFixed(2)}%`;
const s2 = (ms: number) => (ms / 1000).toFixed(2);

/** Languages of the translation set in a --quick run (one page each): a Latin, a CJK, a Cyrillic,
 * two right-to-left, an Indic and the Thai script. */
const QUICK_SET_LANGS = ["deu", "jpn", "rus", "ara", "heb", "hin", "tha"];
/** Pages per language of the translation set (half chosen by --tune; the report half by default). */
const SET_PAGES = 2;

interface Page {
  name: string;
  set: "development" | "translations";
  lang: string;
  png: string;
  text: string;
  dpi: number;
}

export default async function (ctx: BenchContext): Promise<BenchSection> {
  const dir = join(ctx.outDir, "ocr-lang");
  mkdirSync(dir, { recursive: true });
  const split: Split = ctx.args.includes("--tune") ? "tune" : "report";
  const pages: Page[] = [];
  const jp = join(ctx.corpusDir, "files/japanese-tex-dvipdfmx.pdf");
  if (existsSync(jp)) {
    const stem = join(dir, "corpus-japanese-tex");
    spawnSync("pdftoppm", ["-r", "300", "-gray", "-png", "-singlefile", jp, stem]);
    const ref = spawnSync("pdftotext", [jp, "-"], { encoding: "utf8" }).stdout;
    pages.push({
      name: "corpus japanese-tex-dvipdfmx (300 dpi)",
      set: "development",
      lang: "jpn",
      png: `${stem}.png`,
      text: ref,
      dpi: 300,
    });
  }
  // Every offered language with a test text: the ONNX recognisers' and the Tesseract languages
  // of lang-pages.ts that this machine has installed.
  const devLangs = ctx.quick ? ["deu", "jpn", "chi_tra", "rus", "ara"] : ocrLanguages.filter((l) => l in langTexts);
  for (const p of renderLangPages(
    join(dir, "generated"),
    devLangs.filter((l) => ocrLanguages.includes(l)),
  ))
    pages.push({ name: `generated ${p.lang}`, set: "development", dpi: 300, ...p });
  // The translation set (ocr-lang-set.ts): every offered language, pages of the chosen half.
  const setLangs = ctx.quick ? QUICK_SET_LANGS.filter((l) => ocrLanguages.includes(l)) : ocrLanguages;
  const set = renderSetPages(join(dir, `translations-${split}`), setLangs, split, ctx.quick ? 1 : SET_PAGES);
  for (const p of set.pages)
    pages.push({
      name: `${p.id} (${p.dpi} dpi)`,
      set: "translations",
      lang: p.lang,
      png: p.png,
      text: p.text,
      dpi: p.dpi,
    });

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
    writeFileSync(join(dir, `${p.lang}-${i}.reference.txt`), p.text);
    const json = all.texts.get(p.png) ?? "";
    const pdf = join(pdfDir, basename(p.png));
    const layer = spawnSync("pdftotext", [pdf, "-"], { encoding: "utf8" }).stdout;
    const layerRaw = spawnSync("pdftotext", ["-raw", pdf, "-"], { encoding: "utf8" }).stdout;
    // MuPDF's extraction beside poppler's; it reads a file by its extension.
    const pdfCopy = join(pdfDir, `${basename(p.png, ".png")}.pdf`);
    copyFileSync(pdf, pdfCopy);
    const layerMu = spawnSync("mutool", ["draw", "-q", "-F", "txt", "-o", "-", pdfCopy], {
      encoding: "utf8",
      maxBuffer: 64 << 20,
    }).stdout;
    const rtl = RTL.has(p.lang);
    // Both poppler readings of left-to-right text: -raw (the layer's own order, character for
    // character) and the default mode, which joins a line ending in a hyphen to the next line
    // without the hyphen (poppler's TextLine "hyphenated": any PDF's text is read so). Right to
    // left only the default mode, without the embedding marks it wraps runs in: -raw ends a
    // line wherever the next word of the content stream lies left of the last, so it gives a
    // right-to-left line one word per line, from any PDF. MuPDF's `mutool draw -F txt` gives
    // right-to-left lines in visual order (no comparison for them).
    const layerRawIsJson = rtl ? null : sameLines(layerRaw, json);
    const layerIsJson = rtl
      ? sameLines(withoutBidiMarks(layer), pdftotextDehyphenated(json))
      : layerRawIsJson! && sameLines(layer, pdftotextDehyphenated(json));
    const mutoolIsJson = rtl ? null : sameLines(layerMu, json);
    // Where the lines differ, whether each still has the JSON line's characters (whitespace
    // aside, in any order): then only the order of characters differs, as where poppler's bidi
    // reading moves a full stop or a space across a number run of a right-to-left line.
    const layerSameChars = sameCharsPerLine(rtl ? withoutBidiMarks(layer) : layerRaw, json);
    const o = langErrors(p.lang, p.text, ours);
    const t = langErrors(p.lang, p.text, tess);
    return {
      page: p.name,
      set: p.set,
      lang: p.lang,
      dpi: p.dpi,
      engine: oursEngine.get(p.png)!,
      chars: o.chars,
      oursErrors: o.errors,
      tessErrors: t.errors,
      oursCer: o.errors / Math.max(1, o.chars),
      tessCer: t.errors / Math.max(1, t.chars),
      oursNoSpaceErrors: langErrors(p.lang, p.text, ours, true).errors,
      tessNoSpaceErrors: langErrors(p.lang, p.text, tess, true).errors,
      noSpaceChars: langErrors(p.lang, p.text, "", true).chars,
      oursInsertedSpaces: SPACE_CHECKED.has(p.lang) ? insertedSpaces(p.text, ours) : null,
      tessInsertedSpaces: SPACE_CHECKED.has(p.lang) ? insertedSpaces(p.text, tess) : null,
      oursLogical: rtl ? logicalOrder(p.lang, p.text, ours) : null,
      layerLogical: rtl ? logicalOrder(p.lang, p.text, withoutBidiMarks(layer)) : null,
      tessLogical: rtl ? logicalOrder(p.lang, p.text, tess) : null,
      layerIsJson,
      layerRawIsJson,
      layerSameChars,
      mutoolIsJson,
    };
  });
  const dev = rows.filter((r) => r.set === "development");
  const setRows = rows.filter((r) => r.set === "translations");

  // The translation set per language: errors over characters of all its pages.
  const perLang = [...new Set(setRows.map((r) => r.lang))].map((lang) => {
    const rs = setRows.filter((r) => r.lang === lang);
    const sum = (f: (r: (typeof rs)[number]) => number) => rs.reduce((a, r) => a + f(r), 0);
    const chars = sum((r) => r.chars);
    const ns = sum((r) => r.noSpaceChars);
    const spaced = SPACE_CHECKED.has(lang);
    return {
      lang,
      pages: rs.length,
      dpi: rs.map((r) => r.dpi),
      engine: [...new Set(rs.map((r) => r.engine))].join(", "),
      chars,
      oursCer: sum((r) => r.oursErrors) / Math.max(1, chars),
      tessCer: sum((r) => r.tessErrors) / Math.max(1, chars),
      oursNoSpaceCer: sum((r) => r.oursNoSpaceErrors) / Math.max(1, ns),
      tessNoSpaceCer: sum((r) => r.tessNoSpaceErrors) / Math.max(1, ns),
      // Per 1,000 non-space reference characters.
      oursSpaces: spaced ? (1000 * sum((r) => r.oursInsertedSpaces ?? 0)) / Math.max(1, ns) : null,
      tessSpaces: spaced ? (1000 * sum((r) => r.tessInsertedSpaces ?? 0)) / Math.max(1, ns) : null,
      oursLogical: RTL.has(lang) ? rs.every((r) => r.oursLogical) : null,
      layerLogical: RTL.has(lang) ? rs.every((r) => r.layerLogical) : null,
      tessLogical: RTL.has(lang) ? rs.every((r) => r.tessLogical) : null,
      layerIsJson: rs.every((r) => r.layerIsJson),
      layerSameChars: rs.every((r) => r.layerSameChars),
      layerRawIsJson: RTL.has(lang) ? null : rs.every((r) => r.layerRawIsJson),
      mutoolIsJson: RTL.has(lang) ? null : rs.every((r) => r.mutoolIsJson),
    };
  });
  const langOver = perLang.filter((l) => (l.oursCer - l.tessCer) * 100 > 1);
  const rtlLangs = perLang.filter((l) => l.oursLogical !== null);
  const notLogical = rtlLangs.filter((l) => !l.oursLogical || !l.layerLogical);
  const spaceLangs = perLang.filter((l) => l.oursSpaces !== null);
  const moreSpaces = spaceLangs.filter((l) => l.oursSpaces! > l.tessSpaces!);
  const cjkSpaces = spaceLangs.filter((l) => cjkLanguages.has(l.lang) && l.oursSpaces! > 0);

  const misses = dev.filter((r) => r.oursCer > r.tessCer);
  const overPoint = dev.filter((r) => (r.oursCer - r.tessCer) * 100 > 1);
  const mean = (k: "oursCer" | "tessCer") => dev.reduce((a, r) => a + r[k], 0) / Math.max(1, dev.length);
  const sum = (f: (t: (typeof timing)[number]) => number) => timing.reduce((a, t) => a + f(t), 0);
  const [oursMs, tessMs, oursCpu, tessCpu] = [
    sum((t) => t.ours.ms),
    sum((t) => t.tess.ms),
    sum((t) => t.ours.cpuMs),
    sum((t) => t.tess.cpuMs),
  ];
  const oursRssKb = Math.max(allRssKb, ...timing.map((t) => t.ours.rssKb));
  const maxTessRss = Math.max(...timing.map((t) => t.tess.rssKb));
  const devSet = "development pages (the recognisers were chosen on them)";
  const trSet = `the translation set's ${split} half${split === "tune" ? " (for tuning: not a published figure)" : ""}`;
  const yn = (v: boolean | null) => (v === null ? "-" : v ? "yes" : "**no**");
  const layerCell = (r: { layerIsJson: boolean; layerRawIsJson: boolean | null; layerSameChars: boolean }) =>
    r.layerIsJson
      ? "yes"
      : r.layerRawIsJson
        ? "**no**: `-raw` yes, the default mode breaks lines elsewhere"
        : r.layerSameChars
          ? "**no**: same characters per line, order differs"
          : "**no**";
  const f1 = (v: number | null) => (v === null ? "-" : v.toFixed(1));
  const setTable = [
    "| language | pages (dpi) | our model | ours CER | Tesseract CER | ours − Tesseract (points) | ours / Tesseract CER without whitespace | inserted spaces per 1,000 chars, ours / Tesseract | RTL logical order: ours JSON / our layer / Tesseract | pdftotext of our layer = JSON | mutool of our layer = JSON |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...perLang.map(
      (l) =>
        `| ${l.lang} | ${l.pages} (${l.dpi.join(", ")}) | ${l.engine} | ${pct(l.oursCer)} | ${pct(l.tessCer)} | ${(l.oursCer - l.tessCer) * 100 > 1 ? "**" : ""}${((l.oursCer - l.tessCer) * 100).toFixed(2)}${(l.oursCer - l.tessCer) * 100 > 1 ? "**" : ""} | ${pct(l.oursNoSpaceCer)} / ${pct(l.tessNoSpaceCer)} | ${l.oursSpaces === null ? "-" : `${f1(l.oursSpaces)} / ${f1(l.tessSpaces)}`} | ${l.oursLogical === null ? "-" : `${yn(l.oursLogical)} / ${yn(l.layerLogical)} / ${yn(l.tessLogical)}`} | ${layerCell(l)} | ${yn(l.mutoolIsJson)} |`,
    ),
  ].join("\n");
  const table = [
    "| page | language | our model | ours CER | Tesseract CER | ratio | pdftotext of our layer = JSON | mutool of our layer = JSON |",
    "|---|---|---|---|---|---|---|---|",
    ...dev.map(
      (r) =>
        `| ${r.page} | ${r.lang} | ${r.engine} | ${pct(r.oursCer)} | ${pct(r.tessCer)} | ${r.tessCer > 0 ? (r.oursCer / r.tessCer).toFixed(2) : r.oursCer > 0 ? "inf" : "-"} | ${layerCell(r)} | ${yn(r.mutoolIsJson)} |`,
    ),
    `| **mean** | | | ${pct(mean("oursCer"))} | ${pct(mean("tessCer"))} | ${(mean("oursCer") / Math.max(1e-9, mean("tessCer"))).toFixed(2)} | | |`,
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
  const packages = textPackages();
  const markdown = [
    `### Translation set (${split} half): pages nobody tuned on`,
    "",
    `Ours with \`languages: [<code>]\` against \`tesseract -l <code>\` on the same grey PNGs, ${set.pages.length} pages: per offered language ${ctx.quick ? "1 page" : `${SET_PAGES} pages`} of the ${split} half of the OCR language set (bench/README.md, "OCR language set"): the translations of Debian's gettext catalogs (${packages.join(", ")}), set in Noto fonts by Chromium, rasterised at 150-300 dpi, turned 0.5-2 degrees, Gaussian noise. CER per language = edit distance over reference characters of all its pages, after NFKC; Chinese and Japanese without whitespace, the others with whitespace runs as one space (and, beside it, every language without whitespace). Inserted spaces: spaces inside a line that a minimal alignment with the reference leaves unmatched (line breaks are not counted), for Thai, the Indic scripts, Chinese and Japanese. RTL logical order: the text is closer to the reference as written than with each line reversed (JSON, \`pdftotext\` of our searchable PDF without its bidi embedding marks, and Tesseract's text).${set.noSource.length ? ` No text in the catalogs (no row): ${set.noSource.join(", ")}.` : ""}`,
    "",
    setTable,
    "",
    "### Development pages",
    "",
    `Ours against Tesseract on ${devSet}, 300-dpi grey PNGs. CJK CER ignores whitespace; all texts NFKC-normalised.`,
    "",
    table,
    "",
    `Time, whole process on both sides, one language at a time (ours and Tesseract in turn, every page of the language in both sets): ours one process with the worker's ${T} intra-op threads (Bun, the addon, the default models, the language's recogniser on its first page, every page of the language), Tesseract one process in multi-image mode with OMP_THREAD_LIMIT=${T} (its traineddata, every page of the language). No warm figure: ours loads a language's recogniser inside its first page of that language.`,
    "",
    timeTable,
    "",
    `Text layer: one more process of ours over every page of both sets, each with its language (so every recogniser is loaded by its end), writing searchable PDFs; pdftotext of each compared with that run's JSON text, line for line: left-to-right pages both \`pdftotext -raw\` and the default mode (once a line ending in \`-\` is joined to the next without it, as poppler reads every PDF); right-to-left pages the default mode without the bidi embedding marks (U+202A-U+202C) it wraps runs in, since \`pdftotext -raw\` ends a line wherever the next word of the content stream lies left of the last and so reads any right-to-left line one word per line. Beside it MuPDF's \`mutool draw -F txt\`, line for line, left-to-right pages only (it gives right-to-left lines in visual order). Peak RSS of that process: ${(allRssKb / 1024).toFixed(0)} MB; Tesseract's largest: ${(maxTessRss / 1024).toFixed(0)} MB.`,
    "",
    "### Goals",
    "",
    goalLine(
      `issue 40 item 7: no language worse than Tesseract by more than 1 point of CER, ${trSet}`,
      perLang.length ? langOver.length === 0 : null,
      (langOver.length
        ? `over 1 point: ${langOver.map((l) => `${l.lang} (${pct(l.oursCer)} vs ${pct(l.tessCer)})`).join(", ")}`
        : `${perLang.length} languages, worst ${Math.max(...perLang.map((l) => (l.oursCer - l.tessCer) * 100)).toFixed(2)} points`) +
        (set.noSource.length ? `; not measured (no text): ${set.noSource.join(", ")}` : ""),
    ),
    goalLine(
      `issue 40 item 3: right-to-left text in logical order in the JSON and the text layer, ${trSet}`,
      rtlLangs.length ? notLogical.length === 0 : null,
      notLogical.length
        ? `not in logical order: ${notLogical.map((l) => l.lang).join(", ")}`
        : `${rtlLangs.map((l) => l.lang).join(", ")}: every page`,
    ),
    goalLine(
      `issue 40 item 3: no spurious spaces in Thai, the Indic scripts and CJK (no more inserted spaces than Tesseract; none between CJK characters), ${trSet}`,
      spaceLangs.length ? moreSpaces.length === 0 && cjkSpaces.length === 0 : null,
      moreSpaces.length || cjkSpaces.length
        ? `more than Tesseract: ${moreSpaces.map((l) => `${l.lang} (${f1(l.oursSpaces)} vs ${f1(l.tessSpaces)} per 1,000)`).join(", ") || "none"}; CJK with inserted spaces: ${cjkSpaces.map((l) => `${l.lang} (${f1(l.oursSpaces)} per 1,000)`).join(", ") || "none"}`
        : `${spaceLangs.length} languages`,
    ),
    goalLine(
      `issue 18 item 3: CER no worse than Tesseract's on every page, ${devSet}`,
      misses.length === 0,
      misses.length
        ? `worse on ${misses.length} of ${dev.length}: ${misses.map((r) => `${r.page} (${pct(r.oursCer)} vs ${pct(r.tessCer)})`).join(", ")}`
        : `no page worse (${dev.length} pages)`,
    ),
    goalLine(
      `issue 40 item 7 on ${devSet}: no language worse than Tesseract by more than 1 point`,
      overPoint.length === 0,
      overPoint.length
        ? `over 1 point: ${overPoint.map((r) => `${r.page} (${pct(r.oursCer)} vs ${pct(r.tessCer)})`).join(", ")}`
        : `worst ${(Math.max(...dev.map((r) => r.oursCer - r.tessCer)) * 100).toFixed(2)} points`,
    ),
    goalLine(
      "issue 18 item 4: pdftotext of our searchable PDF gives the JSON text, every page of both sets",
      rows.every((r) => r.layerIsJson),
      `${rows.filter((r) => r.layerIsJson).length} of ${rows.length}${
        rows.some((r) => !r.layerIsJson)
          ? `; not: ${rows
              .filter((r) => !r.layerIsJson)
              .map(
                (r) =>
                  `${r.page}${r.layerRawIsJson ? " (-raw gives the JSON; the default mode breaks lines elsewhere)" : r.layerSameChars ? " (same characters per line, order differs)" : ""}`,
              )
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
    title: `OCR languages: ours vs Tesseract traineddata (issues 18, 40; translation set, ${split} half, and development pages)`,
    markdown,
    json: {
      set: "translations+development",
      split,
      textPackages: packages,
      noSource: set.noSource,
      threads: T,
      languages: perLang,
      pages: set.pages.map(({ id, lang, dpi, skewDeg, sigma, font }) => ({ id, lang, dpi, skewDeg, sigma, font })),
      rows,
      timing,
      total: { oursMs, tessMs, oursCpuMs: oursCpu, tessCpuMs: tessCpu },
      maxRssKb: oursRssKb,
      allLanguagesRssKb: allRssKb,
      tesseractMaxRssKb: maxTessRss,
      overOnePointLanguages: langOver.map((l) => l.lang),
      notLogical: notLogical.map((l) => l.lang),
      moreSpacesThanTesseract: moreSpaces.map((l) => l.lang),
      misses: misses.map((r) => r.page),
      overOnePoint: overPoint.map((r) => r.page),
      layerNotJson: rows.filter((r) => !r.layerIsJson).map((r) => r.page),
    },
  };
}
