// The `ocr` result as ALTO 4 (output "alto", an extension; docs/ocr.md, "hOCR and ALTO"): one
// Page per selected page, its PrintSpace holding a TextBlock per block of the blocks JSON, a
// TextLine per line, a String per word with SP between them. Valid against the ALTO 4.3
// schema (test/api/ocr-formats.test.ts validates every output against it).
//
// Units: mm10 (tenths of a millimetre), whole numbers: a PDF page has a physical size, not
// pixels, and pages the OCR rendered at different resolutions (or not at all) keep one unit.
// 1 pt = 0.3528 mm, so a position is within 0.15 pt of the blocks JSON's.
import {
  type Box,
  enginesOf,
  isRtlText,
  notReadReason,
  type OcrBlocksJson,
  type OcrDocumentFacts,
  type OcrPageJson,
  type OcrWordJson,
  rtlLanguage,
  wordsWithText,
  xmlText,
} from "./ocr-blocks";

export const altoContentType = "application/xml";
export const altoNamespace = "http://www.loc.gov/standards/alto/ns-v4#";
export const altoSchemaVersion = "4.3";

/** Points -> tenths of a millimetre, whole. */
const mm10 = (pt: number) => Math.max(0, Math.round((pt * 254) / 72));

/** HPOS, VPOS, WIDTH, HEIGHT of a box; the edges are rounded, so neighbours stay adjacent. */
function position(b: Box): string {
  const [x0, y0, x1, y1] = b.map(mm10) as Box;
  return `HPOS="${x0}" VPOS="${y0}" WIDTH="${Math.max(0, x1 - x0)}" HEIGHT="${Math.max(0, y1 - y0)}"`;
}

/** The space between two words of a line, whichever side the second is on (right to left). */
function space(a: OcrWordJson, b: OcrWordJson): string {
  const [ax0, , ax1] = a.bbox.map(mm10);
  const [bx0, , bx1] = b.bbox.map(mm10);
  if (bx0! > ax1!) return `<SP HPOS="${ax1}" WIDTH="${bx0! - ax1!}"/>`;
  if (ax0! > bx1!) return `<SP HPOS="${bx1}" WIDTH="${ax0! - bx1!}"/>`;
  return "<SP/>";
}

export function renderAlto(doc: OcrBlocksJson, facts: OcrDocumentFacts): string {
  const settings = facts.languages ? `languages: ${facts.languages.join(", ")}` : "languages: default";
  const description = [
    "<Description>",
    " <MeasurementUnit>mm10</MeasurementUnit>",
    " <sourceImageInformation>",
    `  <fileName>${xmlText(facts.filename)}</fileName>`,
    " </sourceImageInformation>",
    ' <Processing ID="ocr">',
    "  <processingCategory>contentGeneration</processingCategory>",
    `  <processingStepSettings>${xmlText(settings)}</processingStepSettings>`,
    "  <processingSoftware>",
    "   <softwareName>docproc</softwareName>",
    `   <softwareVersion>${xmlText(facts.version)}</softwareVersion>`,
    `   <applicationDescription>${xmlText(`text recognition by ${enginesOf(doc).join(", ")}`)}</applicationDescription>`,
    "  </processingSoftware>",
    " </Processing>",
    "</Description>",
  ];
  const rtlLang = rtlLanguage(facts.languages);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<alto xmlns="${altoNamespace}" xmlns:xlink="http://www.w3.org/1999/xlink" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="${altoNamespace} http://www.loc.gov/standards/alto/v4/alto-4-3.xsd" SCHEMAVERSION="${altoSchemaVersion}">`,
    ...description,
    "<Layout>",
    ...doc.pages.map((p) => page(p, rtlLang)),
    "</Layout>",
    "</alto>",
    "",
  ].join("\n");
}

function page(p: OcrPageJson, rtlLang: string | undefined): string {
  const n = p.page + 1;
  const reason = notReadReason(p);
  const size = `WIDTH="${mm10(p.width)}" HEIGHT="${mm10(p.height)}"`;
  const out = [
    `<Page ID="page_${n}" PHYSICAL_IMG_NR="${n}" ${size}${reason ? ` QUALITY_DETAIL="${xmlText(reason)}"` : ""} PROCESSINGREFS="ocr">`,
    ` <PrintSpace HPOS="0" VPOS="0" ${size}>`,
  ];
  let blockNo = 0;
  let lineNo = 0;
  let wordNo = 0;
  for (const block of p.blocks) {
    const lines = block.lines.filter((l) => wordsWithText(l).length > 0);
    if (!lines.length) continue;
    blockNo++;
    out.push(`  <TextBlock ID="block_${n}_${blockNo}" ${position(block.bbox)}>`);
    for (const line of lines) {
      lineNo++;
      const rtl = isRtlText(line.text);
      const dir = rtl ? ` BASEDIRECTION="rtl"${rtlLang ? ` LANG="${rtlLang}"` : ""}` : "";
      out.push(`   <TextLine ID="line_${n}_${lineNo}" ${position(line.bbox)}${dir}>`);
      const words = wordsWithText(line);
      words.forEach((w, i) => {
        wordNo++;
        const wc = Math.min(1, Math.max(0, w.confidence)).toFixed(3);
        out.push(`    <String ID="word_${n}_${wordNo}" ${position(w.bbox)} CONTENT="${xmlText(w.text)}" WC="${wc}"/>`);
        if (i < words.length - 1) out.push(`    ${space(w, words[i + 1]!)}`);
      });
      out.push("   </TextLine>");
    }
    out.push("  </TextBlock>");
  }
  out.push(" </PrintSpace>", "</Page>");
  return out.join("\n");
}
