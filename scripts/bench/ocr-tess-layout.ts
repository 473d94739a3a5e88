// `bun scripts/bench/ocr-tess-layout.ts [--pages N] [lang ...]`: the measurement behind
// crates/ocr/src/tesseract/page.rs `layout_for`. Every Tesseract-read language (or those named)
// on N pages (default 1) of the TUNE half of the OCR language set (ocr-lang-set.ts; the report
// half stays unseen), read by libtesseract twice through our engine (the tess_layout example):
// with Tesseract's own page segmentation and with our detector's lines (and once more with the
// layout layout_for chooses, as the service reads). Prints per language and
// per script CER (whitespace runs as one space, NFKC) and inserted spaces per 1,000 characters
// for both, and the better layout of each script. Needs Chromium, the Noto fonts, the Debian
// catalogs and the example built with the same CARGO_TARGET_DIR:
//   CARGO_TARGET_DIR=… cargo build --release --target x86_64-unknown-linux-gnu -p ocr --example tess_layout
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { modelLanguages, tesseractLanguages } from "../../src/domain/ocr-languages";
import { LANG_SCRIPTS, renderSetPages, SPACE_CHECKED } from "./ocr-lang-set";
import { insertedSpaces, langErrors } from "./ocr-lang.bench";

const root = join(import.meta.dir, "../..");
const args = process.argv.slice(2);
const pagesAt = args.indexOf("--pages");
const count = pagesAt >= 0 ? Number(args[pagesAt + 1]) : 1;
const named = args.filter((a, i) => !a.startsWith("--") && (pagesAt < 0 || i !== pagesAt + 1));
const langs = named.length ? named : tesseractLanguages.filter((l) => !modelLanguages.includes(l) && l in LANG_SCRIPTS);

const target = process.env.CARGO_TARGET_DIR;
if (!target) throw new Error("set CARGO_TARGET_DIR to the directory the tess_layout example was built in");
const example = join(target, "x86_64-unknown-linux-gnu/release/examples/tess_layout");
if (!existsSync(example)) throw new Error(`${example} is missing: build the example (see the head of this file)`);

/** The script a language is written in, as its LANG_SCRIPTS pattern names it. */
const scriptOf = (lang: string) => /Script=(\w+)/.exec(String(LANG_SCRIPTS[lang]))?.[1] ?? lang;

const dir = join(root, "bench/out/ocr-tess-layout");
mkdirSync(dir, { recursive: true });
const set = renderSetPages(dir, langs, "tune", count);
type Counts = { errors: number; chars: number; spaces: number; ms: number };
const zero = (): Counts => ({ errors: 0, chars: 0, spaces: 0, ms: 0 });
const perLang = new Map<string, { Tesseract: Counts; Detector: Counts; chosen: Counts; noSpaceChars: number }>();
for (const lang of langs) {
  const pages = set.pages.filter((p) => p.lang === lang);
  if (!pages.length) continue;
  const r = spawnSync(example, [lang, ...pages.map((p) => `${p.png}:${p.dpi}`)], {
    cwd: root,
    encoding: "utf8",
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`tess_layout ${lang}: ${r.stderr}`);
  const acc = { Tesseract: zero(), Detector: zero(), chosen: zero(), noSpaceChars: 0 };
  for (const line of r.stdout.trim().split("\n")) {
    const o = JSON.parse(line) as {
      image: string;
      layout: "Tesseract" | "Detector" | "chosen";
      ms: number;
      text: string;
    };
    const page = pages.find((p) => p.png === o.image)!;
    if (o.layout === "chosen") {
      writeFileSync(join(dir, `${page.id}.chosen.txt`), o.text);
      const e = langErrors(lang, page.text, o.text);
      acc.chosen.errors += e.errors;
      acc.chosen.chars += e.chars;
      continue;
    }
    const e = langErrors(lang, page.text, o.text);
    const c = acc[o.layout];
    c.errors += e.errors;
    c.chars += e.chars;
    c.ms += o.ms;
    c.spaces += SPACE_CHECKED.has(lang) ? insertedSpaces(page.text, o.text) : 0;
    if (o.layout === "Tesseract") acc.noSpaceChars += langErrors(lang, page.text, "", true).chars;
    writeFileSync(join(dir, `${page.id}.${o.layout}.txt`), o.text);
  }
  perLang.set(lang, acc);
  const cer = (c: Counts) => ((100 * c.errors) / Math.max(1, c.chars)).toFixed(2);
  console.error(
    `${lang}: Tesseract layout ${cer(acc.Tesseract)}%, detector lines ${cer(acc.Detector)}%, layout_for's choice ${cer(acc.chosen)}%`,
  );
}

const pct = (c: Counts) => `${((100 * c.errors) / Math.max(1, c.chars)).toFixed(2)}%`;
const per1000 = (c: Counts, ns: number) => ((1000 * c.spaces) / Math.max(1, ns)).toFixed(1);
const rows = [
  "| script | language | pages | CER, Tesseract's layout | CER, our detector's lines | CER, layout_for's choice | inserted spaces per 1,000, Tesseract's layout / detector lines | s, Tesseract's layout / detector lines |",
  "|---|---|---|---|---|---|---|---|",
];
const byScript = new Map<string, string[]>();
for (const lang of perLang.keys()) byScript.set(scriptOf(lang), [...(byScript.get(scriptOf(lang)) ?? []), lang]);
const verdict: string[] = [];
for (const [script, ls] of byScript) {
  const sum = { Tesseract: zero(), Detector: zero(), chosen: zero(), noSpaceChars: 0 };
  for (const l of ls) {
    const a = perLang.get(l)!;
    for (const k of ["Tesseract", "Detector", "chosen"] as const)
      for (const f of ["errors", "chars", "spaces", "ms"] as const) sum[k][f] += a[k][f];
    sum.noSpaceChars += a.noSpaceChars;
    const n = set.pages.filter((p) => p.lang === l).length;
    rows.push(
      `| ${script} | ${l} | ${n} | ${pct(a.Tesseract)} | ${pct(a.Detector)} | ${pct(a.chosen)} | ${SPACE_CHECKED.has(l) ? `${per1000(a.Tesseract, a.noSpaceChars)} / ${per1000(a.Detector, a.noSpaceChars)}` : "-"} | ${(a.Tesseract.ms / 1000).toFixed(1)} / ${(a.Detector.ms / 1000).toFixed(1)} |`,
    );
  }
  const better = sum.Tesseract.errors <= sum.Detector.errors ? "Tesseract" : "Detector";
  verdict.push(`${script}: ${better} (${pct(sum.Tesseract)} vs ${pct(sum.Detector)})`);
}
console.log(rows.join("\n"));
console.log(
  `\nBetter layout per script (CER over all its pages, Tesseract's layout vs detector lines):\n${verdict.join("\n")}`,
);
