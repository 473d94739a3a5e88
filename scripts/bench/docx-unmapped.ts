// pdf -> docx on pages whose text layer does not say what the page shows (issue 38 item 3):
// glyphs without a usable Unicode mapping, a custom encoding that pdftotext prints as symbols,
// a scan or text drawn as curves. pdftotext is no reference there; Tesseract is: the page
// rendered at 300 dpi by pdftoppm, read by `tesseract` in the language its orientation and
// script detection names (Han: chi_sim, else eng).
//
// Which pages: the reference's own rule, never our engine's verdict. Tesseract reads a page
// whose pdftotext text looks odd (under 16 non-blank characters, a tenth of them unusable,
// letters and digits under half of them, or a fifth of its words mixing scripts); the page is
// unmapped when Tesseract reads at least 10 words there and pdftotext's words hold under half
// of them, in any order. Every other page is judged against pdftotext as before.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnSync } from "node:child_process";
import { docxPages, lcs, pdftotextPages, words } from "../../test/support/text-recall";

const SCRIPTS = ["Latin", "Greek", "Cyrillic", "Hebrew", "Arabic", "Han", "Hangul", "Thai", "Devanagari"].map(
  (s) => [s, new RegExp(`\\p{Script=${s}}`, "u")] as const,
);

/** Whether pdftotext's text of a page looks like something other than text. */
export function looksOdd(text: string): boolean {
  // Leaders (a contents page's dots and rules) are symbols in any text.
  const chars = [...text].filter((c) => !/[\s.\-_·…]/u.test(c));
  if (chars.length < 16) return true;
  const unusable = chars.filter((c) => /[\uFFFD\uE000-\uF8FF\p{Cc}]/u.test(c)).length;
  const alnum = chars.filter((c) => /[\p{L}\p{N}]/u.test(c)).length;
  const tokens = text.split(/\s+/).filter((t) => [...t].filter((c) => /\p{L}/u.test(c)).length >= 2);
  const mixed = tokens.filter((t) => SCRIPTS.filter(([, re]) => re.test(t)).length >= 2).length;
  return (
    unusable >= 0.1 * chars.length || alnum < 0.5 * chars.length || (tokens.length > 0 && mixed >= 0.2 * tokens.length)
  );
}

/** Tesseract's text of one page (0-based) at 300 dpi, in the language its script detection names. */
export function tesseractPage(pdf: string, page: number): string {
  const dir = mkdtempSync(join(tmpdir(), "docx-ref-"));
  try {
    const png = join(dir, "p");
    spawnSync("pdftoppm", [
      "-r",
      "300",
      "-gray",
      "-png",
      "-singlefile",
      "-f",
      `${page + 1}`,
      "-l",
      `${page + 1}`,
      pdf,
      png,
    ]);
    const image = `${png}.png`;
    const osd = spawnSync("tesseract", [image, "-", "--psm", "0"], { encoding: "utf8" });
    const script = /Script:\s*(\S+)/.exec(`${osd.stdout}${osd.stderr}`)?.[1] ?? "Latin";
    const lang = script === "Han" ? "chi_sim" : "eng";
    const r = spawnSync("tesseract", [image, "-", "-l", lang], {
      encoding: "utf8",
      env: { ...process.env, OMP_THREAD_LIMIT: "1" },
    });
    return r.stdout ?? "";
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Words of `b` also in `a`, each counted as often as both hold it. */
function bagOverlap(a: string[], b: string[]): number {
  const bag = new Map<string, number>();
  for (const w of a) bag.set(w, (bag.get(w) ?? 0) + 1);
  let n = 0;
  for (const w of b) {
    const c = bag.get(w) ?? 0;
    if (c > 0) n++, bag.set(w, c - 1);
  }
  return n;
}

export interface UnmappedRecall {
  /** 0-based pages judged against Tesseract. */
  pages: number[];
  /** Tesseract's words on those pages. */
  reference: number;
  /** Of those, found in order (LCS per page) in the DOCX. */
  found: number;
  /** found / reference (1 when no page is unmapped). */
  share: number;
  /** pdftotext's words on those pages found in Tesseract's, in order: what copying the text layer would give. */
  textLayerShare: number;
}

/** The unmapped pages of a PDF (the rule above) and the share of Tesseract's words the DOCX holds there. */
export function unmappedRecall(pdf: string, docx: string): UnmappedRecall {
  const layer = pdftotextPages(pdf);
  const ours = docxPages(docx);
  const out: UnmappedRecall = { pages: [], reference: 0, found: 0, share: 1, textLayerShare: 1 };
  let layerFound = 0;
  layer.forEach((text, p) => {
    if (!looksOdd(text)) return;
    const ref = words(tesseractPage(pdf, p));
    if (ref.length < 10) return;
    // In any order: a page whose layer holds the words in another order (columns, a contents
    // page) is mapped text, judged against pdftotext like the rest.
    if (bagOverlap(words(text), ref) >= 0.5 * ref.length) return;
    const fromLayer = lcs(words(text), ref);
    out.pages.push(p);
    out.reference += ref.length;
    out.found += lcs(words(ours[p] ?? ""), ref);
    layerFound += fromLayer;
  });
  if (out.reference) {
    out.share = out.found / out.reference;
    out.textLayerShare = layerFound / out.reference;
  }
  return out;
}
