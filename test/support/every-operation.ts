// A job of every operation over three small inputs: what the deployment tests (two hosts, the
// compose stack) run to show that every operation works through that deployment.
import { tinyPdf } from "./pdf";

/** The inputs every-operation jobs need, as (bytes, name, content type). */
export const everyOperationInputs = {
  pdf: { bytes: tinyPdf(3), name: "three.pdf", type: "application/pdf" },
  pdf2: { bytes: tinyPdf(2), name: "two.pdf", type: "application/pdf" },
  csv: { bytes: "name,qty\napple,3\npear,5\n", name: "fruit.csv", type: "text/csv" },
} as const;

/** Job specs (POST /jobs bodies), given the ids of the uploaded inputs. */
export function everyOperationJobs(ids: { pdf: string; pdf2: string; csv: string }): Record<string, unknown>[] {
  const { pdf, pdf2, csv } = ids;
  return [
    { operation: "rotate", file_id: pdf, options: { degrees: 90 } },
    { operation: "reorder", file_id: pdf, options: { order: [2, 1, 0] } },
    { operation: "delete_pages", file_id: pdf, options: { pages: [0] } },
    { operation: "merge", file_ids: [pdf, pdf2] },
    { operation: "split", file_id: pdf, options: { mode: "every_page" } },
    { operation: "protect", file_id: pdf, options: { user_password: "pw" } },
    { operation: "convert", file_id: pdf, options: { target: "jpg" } },
    { operation: "convert", file_id: pdf, options: { target: "docx" } },
    { operation: "convert", file_id: csv, options: { target: "xlsx" } },
    { operation: "compress", file_id: pdf },
    { operation: "redact", file_id: pdf, options: { regions: [{ page: 0, x: 10, y: 10, w: 100, h: 50 }] } },
    { operation: "ocr", file_id: pdf2, options: { output: "blocks" } },
    { operation: "searchable_pdf", file_id: pdf2 },
  ];
}
