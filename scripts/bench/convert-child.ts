// Child process of convert.bench.ts: one conversion as a whole process of ours (start, load,
// convert, write, exit), to time against a cold `soffice --convert-to` of the same file.
// `bun scripts/bench/convert-child.ts docx-pdf|xlsx-csv <input> <output>`; exit 1 on failure.
import { docxToPdf, stopLibreOffice } from "../../src/convert/libreoffice";
import { engine } from "../../src/engine/native";

const [op, input, output] = process.argv.slice(2) as [string, string, string];
try {
  if (op === "docx-pdf") await docxToPdf(input, output);
  else if (op === "xlsx-csv") await engine().xlsxToCsv(input, output, {});
  else throw new Error(`unknown conversion ${op}`);
} catch (e) {
  console.error(e instanceof Error ? e.message : String(e));
  stopLibreOffice();
  process.exit(1);
}
stopLibreOffice();
process.exit(0);
