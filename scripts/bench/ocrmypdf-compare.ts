// Searchable PDFs of every scanned corpus PDF, ours against OCRmyPDF 17 (issue 18 item 6): wall
// time per file, and each text layer read back by `pdftotext` against the reference text.
// OCRmyPDF comes from PyPI into a venv under bench/out (made here on the first run, with pip);
// it uses the machine's Tesseract and Ghostscript.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const OCRMYPDF = "ocrmypdf>=17,<18";

/** The corpus scans whose page is OCRmyPDF's LinnSequencer test page (its tests/resources/linn.txt
 * is the reference, one copy per page): the same page scanned, rotated, skewed, CCITT or JBIG2. */
const LINN_SOURCES = new Set(["linn.pdf", "cardinal.pdf", "rotated_skew.pdf", "skew.pdf", "ccitt.pdf", "jbig2.pdf"]);

export interface Scan {
  file: string;
  path: string;
  pages: number;
  /** Reference text of the whole file, or null when the corpus has none. */
  reference: string | null;
}

/** Every PDF with the `scanned` feature in the corpus manifest, plus the OCR reference scan. */
export function scannedPdfs(corpusDir: string): Scan[] {
  const linn = readFileSync(join(corpusDir, "ocr/ocrmypdf-linn-brochure-scan.gt.txt"), "utf8");
  const out: Scan[] = [{ file: "ocrmypdf-linn-brochure-scan.pdf", path: join(corpusDir, "ocr/ocrmypdf-linn-brochure-scan.pdf"), pages: 1, reference: linn }];
  const rows = readFileSync(join(corpusDir, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const head = rows[0]!.split("\t");
  const col = (name: string) => head.indexOf(name);
  for (const line of rows.slice(1)) {
    const f = line.split("\t");
    if (f[col("type")] !== "pdf" || !(f[col("features")] ?? "").split(",").includes("scanned")) continue;
    const pages = Number(f[col("pages")]) || 1;
    const source = (f[col("source_path")] ?? "").split("/").pop()!;
    out.push({ file: f[col("file")]!, path: join(corpusDir, "files", f[col("file")]!), pages, reference: LINN_SOURCES.has(source) ? Array(pages).fill(linn).join("\n\n") : null });
  }
  return out;
}

/** The venv's ocrmypdf, installed on first use; null (with the reason) when pip cannot. */
export function ensureOcrmypdf(outDir: string): { bin: string | null; version: string; why?: string } {
  const venv = join(outDir, "ocrmypdf-venv");
  const bin = join(venv, "bin/ocrmypdf");
  if (!existsSync(bin)) {
    mkdirSync(outDir, { recursive: true });
    const mk = spawnSync("python3", ["-m", "venv", venv], { encoding: "utf8" });
    if (mk.status !== 0) return { bin: null, version: "", why: `python3 -m venv failed: ${mk.stderr.trim()}` };
    const pip = spawnSync(join(venv, "bin/pip"), ["install", "-q", OCRMYPDF], { encoding: "utf8" });
    if (pip.status !== 0) return { bin: null, version: "", why: `pip install ${OCRMYPDF} failed: ${pip.stderr.trim().split("\n").at(-1)}` };
  }
  const v = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return { bin, version: v.stdout.trim() };
}

/** OCRmyPDF on one file, 2 jobs (its use of 2 cores), pages that carry text skipped (as ours
 * does), plain PDF output (ours is not PDF/A either). Returns the wall time, or the error. */
export function runOcrmypdf(bin: string, input: string, output: string): Promise<{ ms: number; ok: boolean; err: string }> {
  return new Promise((resolve) => {
    const t = performance.now();
    // --tesseract-timeout: OCRmyPDF's default (180 s per page) is exceeded on a loaded
    // machine, and the page is then written without text (read-back CER 100%), which says
    // nothing about its layer (seen in the 2026-11-25 09:00 run on four files).
    const p = spawn(bin, ["-j", "2", "--skip-text", "--output-type", "pdf", "-l", "eng", "--tesseract-timeout", "3600", "-q", input, output]);
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    p.on("close", (code) => resolve({ ms: performance.now() - t, ok: code === 0, err: err.trim().split("\n").at(-1) ?? "" }));
  });
}

/** `pdftotext` of a PDF (every page, pages separated by blank lines). */
export function readBack(pdf: string): string {
  const r = spawnSync("pdftotext", [pdf, "-"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.replace(/\f/g, "\n\n") : "";
}
