// A tiny valid PDF of empty A4 pages, for tests that must run without the corpus; written by
// the one hand-made PDF writer in ./pdf.

import { blankPdf } from "./pdf";

/** A valid PDF of `pages` empty A4 pages (the no-corpus fallback). */
export function makePdf(pages: number): Buffer {
  return Buffer.from(blankPdf(pages, [595, 842]));
}
