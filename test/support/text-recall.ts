// Text fidelity of pdf -> docx (issue 7): the share of pdftotext's words found, in order, in the
// DOCX text — the longest common subsequence of normalised words, page by page (pages of the
// DOCX are split at its page breaks), summed over the document.
import { spawnSync } from "node:child_process";

/** Words for comparison: NFKC, lower case, runs of letters/marks/digits (punctuation and symbols separate words), CJK characters one by one, format characters (bidi marks) and U+FFFD removed. */
export function words(text: string): string[] {
  return (
    text
      .normalize("NFKC")
      .toLowerCase()
      // CJK scripts do not separate words with spaces: compare them character by character.
      .replace(/([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}])/gu, " $1 ")
      .replace(/[\p{Cf}\uFFFD]/gu, "")
      // A word is a run of letters, marks and digits: punctuation and symbols (math operators,
      // brackets) separate words, so spacing differences around them do not count.
      .split(/[^\p{L}\p{M}\p{N}]+/u)
      .filter(Boolean)
  );
}

/** Length of the longest common subsequence (O(n*m) time, O(m) memory). */
export function lcs(a: string[], b: string[]): number {
  if (!a.length || !b.length) return 0;
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    const ai = a[i - 1];
    for (let j = 1; j <= b.length; j++) cur[j] = ai === b[j - 1] ? prev[j - 1]! + 1 : Math.max(prev[j]!, cur[j - 1]!);
    [prev, cur] = [cur, prev];
  }
  return prev[b.length]!;
}

/** pdftotext's text, one string per page (form feeds separate pages). */
export function pdftotextPages(pdf: string, mode: "default" | "raw" = "default"): string[] {
  const r = spawnSync("pdftotext", [...(mode === "raw" ? ["-raw"] : []), "-enc", "UTF-8", pdf, "-"], {
    encoding: "utf8",
    maxBuffer: 256 << 20,
  });
  const pages = r.stdout.split("\f");
  if (pages.length && pages[pages.length - 1]!.trim() === "") pages.pop();
  return pages;
}

/** The DOCX body text, one string per page (split at `<w:br w:type="page"/>`). */
export function docxPages(docx: string): string[] {
  const xml = spawnSync("unzip", ["-p", docx, "word/document.xml"], { encoding: "utf8", maxBuffer: 256 << 20 }).stdout;
  const decode = (s: string) =>
    s
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, "&");
  return xml.split('<w:br w:type="page"/>').map((page) =>
    page
      .split("</w:p>")
      .map((p) => [...p.matchAll(/<w:t(?: [^>]*)?>([^<]*)<\/w:t>/g)].map((m) => decode(m[1]!)).join(""))
      .join(" "),
  );
}

export interface Recall {
  /** Words of the reference (pdftotext). */
  reference: number;
  /** Of those, found in order (LCS). */
  found: number;
  recall: number;
  /** Found in any order on the same page (multiset intersection): completeness of the text. */
  foundAnyOrder: number;
}

/** Word recall of the DOCX against pdftotext, page by page; `skip`: 0-based pages left out
 * (pages whose text layer is no reference, judged otherwise). */
export function wordRecall(
  pdf: string,
  docx: string,
  mode: "default" | "raw" = "default",
  skip: ReadonlySet<number> = new Set(),
): Recall {
  const ref = pdftotextPages(pdf, mode);
  const ours = docxPages(docx);
  let reference = 0;
  let found = 0;
  let foundAnyOrder = 0;
  for (let p = 0; p < ref.length; p++) {
    if (skip.has(p)) continue;
    const a = words(ref[p]!);
    const b = words(ours[p] ?? "");
    reference += a.length;
    found += lcs(a, b);
    const bag = new Map<string, number>();
    for (const w of b) bag.set(w, (bag.get(w) ?? 0) + 1);
    for (const w of a) {
      const c = bag.get(w) ?? 0;
      if (c > 0) foundAnyOrder++, bag.set(w, c - 1);
    }
  }
  return { reference, found, recall: reference ? found / reference : 1, foundAnyOrder };
}
