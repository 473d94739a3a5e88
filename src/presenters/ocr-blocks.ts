// The OCR `blocks` document (crates/engine/src/ocr/json.rs, docs/ocr.md) as the hOCR and ALTO
// renderers (hocr.ts, alto.ts) read it, and what they share: XML text, right-to-left lines,
// the language tags of right-to-left languages.

/** [x0, y0, x1, y1] in points from the top-left of the displayed page. */
export type Box = [number, number, number, number];

export interface OcrWordJson {
  text: string;
  bbox: Box;
  /** 0-1. */
  confidence: number;
}

export interface OcrLineJson extends OcrWordJson {
  words: OcrWordJson[];
}

export interface OcrBlockJson {
  bbox: Box;
  lines: OcrLineJson[];
}

export interface OcrPageJson {
  /** 0-based index in the input. */
  page: number;
  width: number;
  height: number;
  ocr: boolean;
  /** "has_text": kept with its own text layer, not OCRed. */
  skipped?: string;
  /** Render resolution of an OCRed page. */
  dpi?: number;
  text_rotation: number;
  text: string;
  blocks: OcrBlockJson[];
  /** What read this page when not the document's `engine`. */
  engine?: string;
  /** Why the page was not read (`ocr_timeout`). */
  error?: { code: string; message: string };
}

export interface OcrBlocksJson {
  engine: string;
  unit: "pt";
  origin: "top-left";
  pages: OcrPageJson[];
}

/** What a renderer says about the document beyond its pages. */
export interface OcrDocumentFacts {
  /** The uploaded file's name. */
  filename: string;
  /** The job's `languages` option, when given (Tesseract-style codes). */
  languages?: string[];
  /** This service's version. */
  version: string;
}

// XML 1.0 allows tab, LF, CR and these ranges; anything else (C0 controls, lone surrogates,
// U+FFFE/U+FFFF) would make the document ill-formed, so it becomes U+FFFD.
const notXmlChar = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text or an attribute value made safe for XML: markup characters escaped, characters XML
 * cannot carry replaced by U+FFFD. */
export function xmlText(s: string): string {
  return Bun.escapeHTML(s.replace(notXmlChar, "\uFFFD"));
}

/** Whether a character is of a right-to-left script; the ranges of the engine's text layer
 * (crates/engine/src/ocr/searchable/rtl.rs, is_rtl_char). */
function isRtlChar(c: string): boolean {
  const n = c.codePointAt(0)!;
  return (
    (n >= 0x0590 && n <= 0x08ff) ||
    (n >= 0xfb1d && n <= 0xfdff) ||
    (n >= 0xfe70 && n <= 0xfeff) ||
    (n >= 0x10800 && n <= 0x10fff) ||
    (n >= 0x1e800 && n <= 0x1efff)
  );
}

/** A line reads right to left when most of its letters are of a right-to-left script (the
 * engine's rule for a word, applied to the line). */
export function isRtlText(text: string): boolean {
  let rtl = 0;
  let other = 0;
  for (const c of text) {
    if (!/\p{L}/u.test(c)) continue;
    if (isRtlChar(c)) rtl++;
    else other++;
  }
  return rtl > other;
}

/** BCP 47 tags of the right-to-left languages Tesseract reads, by Tesseract code. */
const rtlLanguageTags: Record<string, string> = {
  ara: "ar",
  fas: "fa",
  urd: "ur",
  heb: "he",
  yid: "yi",
  pus: "ps",
  snd: "sd",
  uig: "ug",
  div: "dv",
  syr: "syr",
  kur_ara: "ckb",
};

/** The language of the right-to-left lines: the job's one right-to-left language, if it named
 * exactly one; otherwise unknown (a line's script does not tell Arabic from Persian). */
export function rtlLanguage(languages: string[] | undefined): string | undefined {
  const tags = (languages ?? []).map((l) => rtlLanguageTags[l]).filter((t): t is string => !!t);
  return tags.length === 1 ? tags[0] : undefined;
}

/** The words of a line that have text (a format's word element needs some). */
export function wordsWithText(line: OcrLineJson): OcrWordJson[] {
  return line.words.filter((w) => w.text.trim() !== "");
}

/** Why a page has no recognised text, or null when it was read. */
export function notReadReason(page: OcrPageJson): string | null {
  if (page.error) return `not read: ${page.error.code}`;
  if (page.skipped === "has_text") return "not OCRed: the page already carries a text layer";
  if (!page.ocr) return "not OCRed";
  return null;
}

/** Every recogniser named in the document (its `engine`, then the pages' own), once each. */
export function enginesOf(doc: OcrBlocksJson): string[] {
  return [...new Set([doc.engine, ...doc.pages.flatMap((p) => (p.engine ? [p.engine] : []))])];
}
