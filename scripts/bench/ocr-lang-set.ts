// The OCR language set (issue 40 item 7): pages in every offered language rendered from real
// text nobody tuned on, the translations that Debian packages ship as gettext catalogs
// (/usr/share/locale/<locale>/LC_MESSAGES/<domain>.mo). The texts are read from the installed
// packages when the bench runs and never committed; bench/README.md, "OCR language set", states
// the rule and the packages with their licences.
//
// The rule, fixed before any result:
// - Strings: every singular entry of the catalogs of TEXT_DOMAINS (in that order) for the
//   language's locale (LANG_LOCALES); English takes the msgids of the German catalogs. Whitespace
//   runs become one space. Kept when the translation differs from its msgid, neither holds a
//   format, markup or mnemonic character (FORMAT_CHARS), at most 10% of its characters are digits,
//   at least 80% of its non-space characters are letters or marks, at least 80% of its letters are
//   in the language's script (LANG_SCRIPTS), and it has at least MIN_CHARS characters (fewer for
//   the scripts without spaces). The first of equal translations is kept.
// - Split: a string is in the report half when the first byte of the sha256 of its msgid is >= 128,
//   else in the tune half, so one source sentence is in the same half in every language.
// - Pages: per language and half, the strings in order of the sha256 of `<lang>\0<msgid>`, joined
//   (by a space; by nothing in Chinese and Japanese) into paragraphs of at least PARA_CHARS, the
//   paragraphs into pages of at least PAGE_CHARS; the first `count` pages. A page shorter than a
//   third of PAGE_CHARS (the strings ran out) is dropped.
// - Images: A4, 12 pt, a Noto font for the script (sans or serif by the page's hash), set by
//   Chromium (HarfBuzz shaping, the Unicode bidi algorithm for Arabic, Persian, Urdu and Hebrew),
//   rasterised in grey at 150, 200 or 300 dpi, turned 0.5-2 degrees either way, Gaussian noise of
//   sigma 6-14 grey levels (ocr-eval-set.ts's degrade), all chosen by the page's hash.
//   The reference is the page's text in logical order, paragraphs one a line.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { degrade } from "./ocr-eval-set";

export type Split = "tune" | "report";

/** Gettext domains read, in order, and the Debian package that ships each (installed by
 * scripts/setup-test.sh where not already there). */
export const TEXT_DOMAINS: { domain: string; pkg: string; licence: string }[] = [
  { domain: "gtk20-properties", pkg: "libgtk2.0-common", licence: "LGPL-2.0+" },
  { domain: "gtk20", pkg: "libgtk2.0-common", licence: "LGPL-2.0+" },
  { domain: "glib20", pkg: "libglib2.0-data", licence: "LGPL-2.1+" },
  { domain: "gsettings-desktop-schemas", pkg: "gsettings-desktop-schemas", licence: "LGPL-2.1+" },
  { domain: "gdk-pixbuf", pkg: "libgdk-pixbuf2.0-common", licence: "LGPL-2.1+" },
  { domain: "apt", pkg: "apt", licence: "GPL-2+" },
  { domain: "libapt-pkg6.0", pkg: "libapt-pkg6.0", licence: "GPL-2+" },
  { domain: "dpkg", pkg: "dpkg", licence: "GPL-2+" },
];

/** Debian locale directory per Tesseract code (eng: the msgids, see ENGLISH_FROM). Filipino
 * reads the Tagalog catalogs (`tl`; Filipino is the standard form of Tagalog). */
export const LANG_LOCALES: Record<string, string> = {
  deu: "de",
  fra: "fr",
  spa: "es",
  ita: "it",
  por: "pt",
  nld: "nl",
  chi_sim: "zh_CN",
  jpn: "ja",
  chi_tra: "zh_TW",
  pol: "pl",
  ces: "cs",
  hun: "hu",
  tur: "tr",
  swe: "sv",
  dan: "da",
  nor: "nb",
  fin: "fi",
  est: "et",
  lav: "lv",
  lit: "lt",
  slv: "sl",
  hrv: "hr",
  cat: "ca",
  glg: "gl",
  eus: "eu",
  isl: "is",
  gle: "ga",
  afr: "af",
  ind: "id",
  msa: "ms",
  lat: "la",
  sqi: "sq",
  mlt: "mt",
  bos: "bs",
  swa: "sw",
  cym: "cy",
  fil: "tl",
  rus: "ru",
  ukr: "uk",
  bel: "be",
  bul: "bg",
  srp: "sr",
  mkd: "mk",
  ell: "el",
  ara: "ar",
  fas: "fa",
  urd: "ur",
  heb: "he",
  hin: "hi",
  mar: "mr",
  nep: "ne",
  ben: "bn",
  tam: "ta",
  tel: "te",
  kan: "kn",
  mal: "ml",
  guj: "gu",
  pan: "pa",
  tha: "th",
  kor: "ko",
  vie: "vi",
};
/** English is the msgids of this locale's catalogs (the most complete translation). */
export const ENGLISH_FROM = "de";

const latin = /\p{Script=Latin}/u;
/** The script a language's letters must be in (80% of them). */
export const LANG_SCRIPTS: Record<string, RegExp> = {
  ...Object.fromEntries(
    [
      "eng",
      "deu",
      "fra",
      "spa",
      "ita",
      "por",
      "nld",
      "pol",
      "ces",
      "hun",
      "tur",
      "swe",
      "dan",
      "nor",
      "fin",
      "est",
      "lav",
      "lit",
      "slv",
      "hrv",
      "cat",
      "glg",
      "eus",
      "isl",
      "gle",
      "afr",
      "ind",
      "msa",
      "lat",
      "sqi",
      "mlt",
      "bos",
      "swa",
      "cym",
      "fil",
      "vie",
    ].map((l) => [l, latin]),
  ),
  ...Object.fromEntries(["rus", "ukr", "bel", "bul", "srp", "mkd"].map((l) => [l, /\p{Script=Cyrillic}/u])),
  ell: /\p{Script=Greek}/u,
  ara: /\p{Script=Arabic}/u,
  fas: /\p{Script=Arabic}/u,
  urd: /\p{Script=Arabic}/u,
  heb: /\p{Script=Hebrew}/u,
  hin: /\p{Script=Devanagari}/u,
  mar: /\p{Script=Devanagari}/u,
  nep: /\p{Script=Devanagari}/u,
  ben: /\p{Script=Bengali}/u,
  tam: /\p{Script=Tamil}/u,
  tel: /\p{Script=Telugu}/u,
  kan: /\p{Script=Kannada}/u,
  mal: /\p{Script=Malayalam}/u,
  guj: /\p{Script=Gujarati}/u,
  pan: /\p{Script=Gurmukhi}/u,
  tha: /\p{Script=Thai}/u,
  kor: /\p{Script=Hangul}/u,
  chi_sim: /\p{Script=Han}/u,
  chi_tra: /\p{Script=Han}/u,
  jpn: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u,
};

/** Written right to left (the page is set dir=rtl; logical order is checked). */
export const RTL = new Set(["ara", "fas", "urd", "heb"]);
/** No spaces between words: strings joined by nothing; CER ignores whitespace. */
export const NO_SPACES = new Set(["jpn", "chi_sim", "chi_tra"]);
/** Scripts where a space inside a line is a word boundary the engine must not invent (Thai has
 * none between words; Indic conjuncts must not be split; CJK none at all). */
export const SPACE_CHECKED = new Set([
  "tha",
  "hin",
  "mar",
  "nep",
  "ben",
  "tam",
  "tel",
  "kan",
  "mal",
  "guj",
  "pan",
  "jpn",
  "chi_sim",
  "chi_tra",
]);

/** Characters of format strings, markup, mnemonics and paths: a string with one is no prose. */
export const FORMAT_CHARS = /[%$&_<>{}[\]\\|/=@#*^~`+]/;
export const MIN_CHARS = 20;
const MIN_CHARS_DENSE: Record<string, number> = { jpn: 8, chi_sim: 8, chi_tra: 8, kor: 12 };
const PARA_CHARS = 350;
const PAGE_CHARS = 1000;
const DENSE_SCALE: Record<string, number> = { jpn: 0.4, chi_sim: 0.4, chi_tra: 0.4, kor: 0.6 };

const sha = (s: string) => createHash("sha256").update(s).digest();

export interface SetString {
  msgid: string;
  text: string;
  split: Split;
}

/** Which half a source string is in: by the first byte of the sha256 of its msgid. */
export function splitOf(msgid: string): Split {
  return sha(msgid)[0]! >= 128 ? "report" : "tune";
}

/** The selection rule over one language's (msgid, msgstr) pairs in catalog order. */
export function selectStrings(lang: string, pairs: [string, string][]): SetString[] {
  const script = LANG_SCRIPTS[lang];
  if (!script) return [];
  const min = MIN_CHARS_DENSE[lang] ?? MIN_CHARS;
  const seen = new Set<string>();
  const out: SetString[] = [];
  for (const [msgid, msgstr] of pairs) {
    const text = msgstr.replace(/\s+/g, " ").trim();
    if (!msgid || !text || (lang !== "eng" && text === msgid.replace(/\s+/g, " ").trim())) continue;
    if (FORMAT_CHARS.test(msgid) || FORMAT_CHARS.test(text)) continue;
    const chars = [...text];
    if (chars.length < min) continue;
    if (chars.filter((c) => /\p{Nd}/u.test(c)).length > 0.1 * chars.length) continue;
    const nonSpace = chars.filter((c) => !/\s/.test(c));
    const letters = nonSpace.filter((c) => /\p{L}/u.test(c));
    if (nonSpace.filter((c) => /[\p{L}\p{M}]/u.test(c)).length < 0.8 * nonSpace.length) continue;
    if (letters.filter((c) => script.test(c)).length < 0.8 * letters.length) continue;
    if (seen.has(text)) continue;
    seen.add(text);
    out.push({ msgid, text, split: splitOf(msgid) });
  }
  return out;
}

/** Pages of one language and half: each a list of paragraphs. */
export function buildPages(lang: string, strings: SetString[], split: Split, count: number): string[][] {
  const scale = DENSE_SCALE[lang] ?? 1;
  const [para, page] = [PARA_CHARS * scale, PAGE_CHARS * scale];
  const joiner = NO_SPACES.has(lang) ? "" : " ";
  const order = strings
    .filter((s) => s.split === split)
    .map((s) => ({ s, key: sha(`${lang}\0${s.msgid}`).toString("hex") }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.s.text);
  const pages: string[][] = [];
  let paras: string[] = [];
  let cur: string[] = [];
  const len = (xs: string[]) => [...xs.join(joiner)].length;
  const pageLen = () => paras.reduce((a, p) => a + [...p].length, 0) + len(cur);
  for (const t of order) {
    if (pages.length === count) break;
    cur.push(t);
    if (len(cur) >= para) {
      paras.push(cur.join(joiner));
      cur = [];
    }
    if (pageLen() >= page) {
      if (cur.length) paras.push(cur.join(joiner));
      pages.push(paras);
      paras = [];
      cur = [];
    }
  }
  if (pages.length < count && cur.length) paras.push(cur.join(joiner));
  if (pages.length < count && paras.length && pageLen() >= page / 3) pages.push(paras);
  return pages;
}

/** Every installed catalog of TEXT_DOMAINS for `locale`, in order, as (msgid, msgstr) pairs,
 * read by Python's gettext module (singular entries; a msgctxt stays in front of its msgid). */
export function readCatalogs(locale: string, localeRoot = "/usr/share/locale"): [string, string][] {
  const files = TEXT_DOMAINS.map((d) => join(localeRoot, locale, "LC_MESSAGES", `${d.domain}.mo`));
  const py = `
import gettext, json, os, sys
out = []
for f in sys.argv[1:]:
    if not os.path.exists(f): continue
    with open(f, "rb") as fh:
        cat = gettext.GNUTranslations(fh)._catalog
    out += [[k, v] for k, v in cat.items() if isinstance(k, str) and k]
print(json.dumps(out))
`;
  const r = spawnSync("python3", ["-c", py, ...files], { encoding: "utf8", maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`python3 gettext (${locale}): ${r.error ?? r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The selected strings of `lang`, or [] when there is no catalog for it. */
export function langStrings(lang: string, localeRoot?: string): SetString[] {
  if (lang === "eng")
    return selectStrings(
      "eng",
      readCatalogs(ENGLISH_FROM, localeRoot).map(([k]) => [k, k]),
    );
  const locale = LANG_LOCALES[lang];
  return locale ? selectStrings(lang, readCatalogs(locale, localeRoot)) : [];
}

/** Installed versions of the packages the texts come from (for the report). */
export function textPackages(): string[] {
  const pkgs = [...new Set(TEXT_DOMAINS.map((d) => d.pkg))];
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format fields
  const r = spawnSync("dpkg-query", ["-W", "-f", "${Package} ${Version}\\n", ...pkgs], { encoding: "utf8" });
  return r.stdout.trim().split("\n").filter(Boolean);
}

const FONTS: Record<string, [string, string]> = {
  ara: ["Noto Naskh Arabic", "Noto Sans Arabic"],
  fas: ["Noto Naskh Arabic", "Noto Sans Arabic"],
  urd: ["Noto Naskh Arabic", "Noto Sans Arabic"],
  heb: ["Noto Serif Hebrew", "Noto Sans Hebrew"],
  hin: ["Noto Serif Devanagari", "Noto Sans Devanagari"],
  mar: ["Noto Serif Devanagari", "Noto Sans Devanagari"],
  nep: ["Noto Serif Devanagari", "Noto Sans Devanagari"],
  ben: ["Noto Serif Bengali", "Noto Sans Bengali"],
  tam: ["Noto Serif Tamil", "Noto Sans Tamil"],
  tel: ["Noto Serif Telugu", "Noto Sans Telugu"],
  kan: ["Noto Serif Kannada", "Noto Sans Kannada"],
  mal: ["Noto Serif Malayalam", "Noto Sans Malayalam"],
  guj: ["Noto Serif Gujarati", "Noto Sans Gujarati"],
  pan: ["Noto Serif Gurmukhi", "Noto Sans Gurmukhi"],
  tha: ["Noto Serif Thai", "Noto Sans Thai"],
  kor: ["Noto Serif CJK KR", "Noto Sans CJK KR"],
  jpn: ["Noto Serif CJK JP", "Noto Sans CJK JP"],
  chi_sim: ["Noto Serif CJK SC", "Noto Sans CJK SC"],
  chi_tra: ["Noto Serif CJK TC", "Noto Sans CJK TC"],
};
/** HTML lang attribute (so Chromium picks the right glyph variants and line breaking). */
const HTML_LANG: Record<string, string> = { eng: "en", chi_sim: "zh-Hans", chi_tra: "zh-Hant", ...LANG_LOCALES };

export interface SetPage {
  /** `<lang>-<split>-<n>`: the page's identity, the key of its hash choices. */
  id: string;
  lang: string;
  split: Split;
  dpi: number;
  skewDeg: number;
  sigma: number;
  font: string;
  /** The page's text in logical order, paragraphs one a line. */
  text: string;
  png: string;
}

function fontInstalled(family: string): boolean {
  return spawnSync("fc-list", [`:family=${family}`, "family"], { encoding: "utf8" }).stdout.trim() !== "";
}

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** Renders the pages of `langs` (one Chromium run) and degrades each; returns them in order. */
export function renderSetPages(
  dir: string,
  langs: string[],
  split: Split,
  count: number,
  localeRoot?: string,
): { pages: SetPage[]; noSource: string[] } {
  mkdirSync(dir, { recursive: true });
  const pages: Omit<SetPage, "png">[] = [];
  const noSource: string[] = [];
  for (const lang of langs) {
    const texts = buildPages(lang, langStrings(lang, localeRoot), split, count);
    if (!texts.length) noSource.push(lang);
    texts.forEach((paras, n) => {
      const id = `${lang}-${split}-${n + 1}`;
      const h = sha(id);
      const [serif, sans] = FONTS[lang] ?? ["Noto Serif", "Noto Sans"];
      pages.push({
        id,
        lang,
        split,
        dpi: [150, 200, 300][h[1]! % 3]!,
        skewDeg: (h[2]! % 2 ? 1 : -1) * (0.5 + (h[3]! / 255) * 1.5),
        sigma: 6 + (h[4]! / 255) * 8,
        font: h[0]! % 2 ? serif : sans,
        text: paras.join("\n"),
      });
    });
  }
  if (!pages.length) return { pages: [], noSource };
  for (const f of new Set(pages.map((p) => p.font)))
    if (!fontInstalled(f)) throw new Error(`font ${f} is not installed (Debian fonts-noto-core, fonts-noto-cjk)`);
  const sections = pages.map(
    (p) =>
      `<section lang="${HTML_LANG[p.lang] ?? "und"}"${RTL.has(p.lang) ? ' dir="rtl"' : ""} style="font-family:'${p.font}'">${p.text
        .split("\n")
        .map((t) => `<p>${esc(t)}</p>`)
        .join("")}</section>`,
  );
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>@page{size:A4;margin:20mm}body{margin:0}section{break-after:page;font-size:12pt;line-height:1.5;hyphens:none;text-align:start}p{margin:0 0 5mm 0}</style></head><body>${sections.join("")}</body></html>`;
  const htmlPath = join(dir, "pages.html");
  const pdfPath = join(dir, "pages.pdf");
  writeFileSync(htmlPath, html);
  const r = spawnSync(
    "chromium",
    ["--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer", `--print-to-pdf=${pdfPath}`, htmlPath],
    { encoding: "utf8", timeout: 300_000 },
  );
  if (r.status !== 0) throw new Error(`chromium: ${r.error ?? r.stderr}`);
  const info = spawnSync("pdfinfo", [pdfPath], { encoding: "utf8" }).stdout;
  const n = Number(/^Pages:\s+(\d+)/m.exec(info)?.[1]);
  if (n !== pages.length)
    throw new Error(`${pdfPath}: ${n} pages for ${pages.length} texts (a text overflowed its page)`);
  return {
    pages: pages.map((p, i) => {
      const png = join(dir, `${p.id}.png`);
      degrade(pdfPath, i + 1, p.dpi, p.skewDeg, p.sigma, sha(p.id).readUInt32BE(8), png);
      return { ...p, png };
    }),
    noSource,
  };
}
