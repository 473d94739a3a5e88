// The `ocr` result as hOCR 1.2 (output "hocr", an extension; docs/ocr.md, "hOCR and ALTO"):
// an XHTML document with one ocr_page per selected page, in which each block of the blocks
// JSON is an ocr_carea holding one ocr_par, each line an ocr_line, each word an ocrx_word.
//
// Units: hOCR boxes are integer pixels of the page image. A page the OCR read has them at the
// resolution it was rendered at (`scan_res` = the blocks JSON's `dpi`); a page that was not
// read has no image, and its box is in points (`scan_res 72 72`).
import {
  type Box,
  enginesOf,
  isRtlText,
  notReadReason,
  type OcrBlocksJson,
  type OcrDocumentFacts,
  type OcrPageJson,
  rtlLanguage,
  wordsWithText,
  xmlText,
} from "./ocr-blocks";

export const hocrContentType = "application/xhtml+xml";

/** A title property's string value: hOCR quotes it, so quotes and separators are left out. */
function quoted(s: string): string {
  return `"${s.replace(/["\\;]/g, "_")}"`;
}

export function renderHocr(doc: OcrBlocksJson, facts: OcrDocumentFacts): string {
  const rtlLang = rtlLanguage(facts.languages);
  const anyRtl = doc.pages.some((p) => p.blocks.some((b) => b.lines.some((l) => isRtlText(l.text))));
  const capabilities = ["ocr_page", "ocr_carea", "ocr_par", "ocr_line", "ocrx_word", "ocrp_wconf"];
  if (anyRtl) capabilities.push("ocrp_dir");
  if (anyRtl && rtlLang) capabilities.push("ocrp_lang");
  const head = [
    `<title>${xmlText(facts.filename)}</title>`,
    `<meta http-equiv="Content-Type" content="text/html; charset=utf-8"/>`,
    `<meta name="ocr-system" content="${xmlText(`docproc ${facts.version} (${enginesOf(doc).join(", ")})`)}"/>`,
    `<meta name="ocr-capabilities" content="${capabilities.join(" ")}"/>`,
    `<meta name="ocr-number-of-pages" content="${doc.pages.length}"/>`,
    ...(facts.languages ? [`<meta name="ocr-langs" content="${xmlText(facts.languages.join(" "))}"/>`] : []),
  ];
  const body = doc.pages.map((p) => page(p, facts.filename, anyRtl ? rtlLang : undefined));
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">`,
    `<html xmlns="http://www.w3.org/1999/xhtml">`,
    "<head>",
    ...head.map((l) => ` ${l}`),
    "</head>",
    "<body>",
    ...body,
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

function page(p: OcrPageJson, filename: string, rtlLang: string | undefined): string {
  const res = p.ocr && p.dpi ? p.dpi : 72;
  const px = (v: number) => Math.max(0, Math.round((v * res) / 72));
  const bbox = (b: Box) => `bbox ${px(b[0])} ${px(b[1])} ${px(b[2])} ${px(b[3])}`;
  const n = p.page + 1;
  const title = [
    `image ${quoted(filename)}`,
    bbox([0, 0, p.width, p.height]),
    `ppageno ${p.page}`,
    `scan_res ${res} ${res}`,
  ].join("; ");
  const out = [`<div class="ocr_page" id="page_${n}" title="${xmlText(title)}">`];
  const reason = notReadReason(p);
  // Why there is no text, for a person reading the file; hOCR has no property for it.
  if (reason) out.push(` <!-- ${reason.replace(/--/g, "-")} -->`);
  let blockNo = 0;
  let lineNo = 0;
  let wordNo = 0;
  for (const block of p.blocks) {
    const lines = block.lines.filter((l) => wordsWithText(l).length > 0);
    if (!lines.length) continue;
    blockNo++;
    out.push(` <div class="ocr_carea" id="block_${n}_${blockNo}" title="${bbox(block.bbox)}">`);
    out.push(`  <p class="ocr_par" id="par_${n}_${blockNo}" title="${bbox(block.bbox)}">`);
    for (const line of lines) {
      lineNo++;
      const rtl = isRtlText(line.text);
      const attrs = rtl ? ` dir="rtl"${rtlLang ? ` lang="${rtlLang}"` : ""}` : "";
      const words = wordsWithText(line).map((w) => {
        wordNo++;
        const conf = Math.round(Math.min(1, Math.max(0, w.confidence)) * 100);
        return `<span class="ocrx_word" id="word_${n}_${wordNo}" title="${bbox(w.bbox)}; x_wconf ${conf}">${xmlText(w.text)}</span>`;
      });
      out.push(
        `   <span class="ocr_line" id="line_${n}_${lineNo}" title="${bbox(line.bbox)}"${attrs}>${words.join(" ")}</span>`,
      );
    }
    out.push("  </p>", " </div>");
  }
  out.push("</div>");
  return out.join("\n");
}
