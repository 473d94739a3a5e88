// The `convert` executor: dispatches on the input kind and `options.target` to one handler per
// pair of src/domain/operations.ts `convertPairs`. Job validation already refused pairs that
// are not offered, so a missing handler here is an internal error, not a user error.
// Other helpers add their pair (e.g. "pdf->jpg") to `convertHandlers`.
import { join } from "node:path";
import { engine } from "../../engine/native";
import { docxToPdf } from "../../convert/libreoffice";
import type { Executor } from "./types";
import { pdfToJpg } from "./pagework";
import { ensureOcr } from "./ocr";
import { config } from "../../config";
import { baseName } from "./naming";
import { JobError } from "../../domain/errors";
import { convertOptionsFor } from "../../domain/operations";

const docxToPdfHandler: Executor<"convert"> = async (input) => {
  const out = join(input.workDir, "out.pdf");
  if (input.control.cancelled) throw new JobError("internal_error", "cancelled");
  await docxToPdf(input.inputs[0]!.path, out);
  // Pages processed = pages of the produced PDF (the engine's identify).
  const id = await engine().identify(out);
  if (id.kind !== "pdf" || !id.page_count)
    throw new JobError("conversion_failed", "LibreOffice produced an unreadable PDF.");
  return {
    pages_processed: id.page_count,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}.pdf`,
      content_type: "application/pdf",
    },
  };
};

// xlsx -> csv: one sheet per job (options.sheet, default the first); the result names it.
// Pages processed: 1 (the exported sheet; the reservation counted every sheet).
const xlsxToCsvHandler: Executor<"convert"> = async (input) => {
  const out = join(input.workDir, "out.csv");
  const o = convertOptionsFor("csv", input.options);
  const r = await engine().xlsxToCsv(input.inputs[0]!.path, out, o, input.control);
  const sheet = r.sheet_name.replace(/[^\w.-]+/g, "_").slice(0, 31) || `sheet${r.sheet_index + 1}`;
  return {
    pages_processed: 1,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}-${sheet}.csv`,
      content_type: "text/csv; charset=utf-8",
      note: `sheet ${JSON.stringify(r.sheet_name)} (index ${r.sheet_index} of ${r.sheet_count} sheets), ${r.rows} rows x ${r.columns} columns`,
    },
  };
};

// csv -> xlsx: pages processed = the input's page count (identify: 50 non-blank lines a page).
const csvToXlsxHandler: Executor<"convert"> = async (input) => {
  const out = join(input.workDir, "out.xlsx");
  const o = convertOptionsFor("xlsx", input.options);
  const r = await engine().csvToXlsx(input.inputs[0]!.path, out, o, input.control);
  return {
    pages_processed: Math.max(1, input.inputs[0]!.page_count ?? 1),
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}.xlsx`,
      content_type: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      note: `${r.rows} rows x ${r.columns} columns, delimiter ${JSON.stringify(r.delimiter)}; ${r.numbers} numbers, ${r.dates} dates, ${r.texts} text cells`,
    },
  };
};

// pdf -> docx: pages processed = pages converted (options.pages or all), OCRed pages included.
// Pages without a text layer (the OCR rule: fewer than 16 non-blank characters) are OCRed with
// the engine's OCR, and so are pages whose text looks unmapped (glyphs without a usable Unicode
// mapping, lines of symbols), whose lines take the recognised words where these differ from
// the text layer (crates/engine/src/convert/docx/unmapped.rs). A first pass runs without OCR (born-digital PDFs, the common case, never
// load ONNX Runtime); only when it reports such pages is OCR initialised (once per worker
// process, shared with the ocr operation) and the conversion run again with OCR — the text
// pass is a few ms a page, small beside OCR itself (~1-3 s a page).
// Sandbox jobs with SANDBOX_OCR=fixture skip OCR (no ONNX Runtime), and say so in the note.
const pdfToDocxHandler: Executor<"convert"> = async (input) => {
  const out = join(input.workDir, "out.docx");
  const o = convertOptionsFor("docx", input.options);
  let r = await engine().pdfToDocx(input.inputs[0]!.path, out, o, input.control);
  let ocrSkipped: string | null = null;
  if (r.pages_without_text.length || r.pages_unmapped_text.length) {
    if (input.mode === "test" && config.sandboxOcr === "fixture") {
      ocrSkipped = "OCR is not run on sandbox jobs with SANDBOX_OCR=fixture";
    } else {
      await ensureOcr();
      r = await engine().pdfToDocx(input.inputs[0]!.path, out, { ...o, ocr: true }, input.control);
    }
  }
  const notes = [`${r.paragraphs} paragraphs, ${r.tables} tables, ${r.images} pictures`];
  if (r.images_skipped) notes.push(`${r.images_skipped} picture(s) over 40 megapixels left out`);
  if (r.pages_ocred.length)
    notes.push(
      `page(s) ${r.pages_ocred.join(", ")} (0-based) are scans without a text layer: their text was recognised by OCR (editable paragraphs replace the page picture)`,
    );
  if (r.lines_recognised)
    notes.push(
      `${r.lines_recognised} line(s) on page(s) ${r.pages_unmapped_text.join(", ")} (0-based) have text without a usable Unicode mapping: their text was recognised by OCR`,
    );
  if (ocrSkipped && r.pages_without_text.length)
    notes.push(
      `page(s) ${r.pages_without_text.join(", ")} (0-based) have no text layer and were kept as pictures only (${ocrSkipped})`,
    );
  if (ocrSkipped && r.pages_unmapped_text.length)
    notes.push(
      `page(s) ${r.pages_unmapped_text.join(", ")} (0-based) have text that looks unmapped, kept as it is (${ocrSkipped})`,
    );
  return {
    pages_processed: r.pages_processed,
    result: {
      type: "file",
      path: out,
      filename: `${baseName(input.inputs[0]!.filename)}.docx`,
      content_type: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      note: notes.join("; "),
    },
  };
};

export const convertHandlers: Record<string, Executor<"convert">> = {
  "pdf->docx": pdfToDocxHandler,
  "docx->pdf": docxToPdfHandler,
  "pdf->jpg": pdfToJpg,
  "xlsx->csv": xlsxToCsvHandler,
  "csv->xlsx": csvToXlsxHandler,
};

export const convert: Executor<"convert"> = async (input) => {
  const from = input.inputs[0]!.kind;
  const to = input.options.target;
  const handler = convertHandlers[`${from}->${to}`];
  if (!handler) throw new JobError("internal_error", `No converter for ${from} -> ${to} in this worker.`);
  return handler(input);
};
