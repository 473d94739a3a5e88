// Searchable PDFs of scanned PDFs, ours against OCRmyPDF 17 (issue 18 item 6), by the timing rules
// of bench/README.md: both whole process (OCRmyPDF's wall time includes its start-up, ours the
// child's whole process: Bun, the addon, the models, the page(s), the PDF written; nothing
// subtracted), one file at a time, ours and OCRmyPDF in turn on each file (which goes first
// alternates from file to file), the same thread budget: ours one process with P intra-op threads,
// OCRmyPDF `-j P` (P = the cores; OCRmyPDF keeps its workers x Tesseract's OpenMP threads within
// P itself: OMP_THREAD_LIMIT = clamp(P / pages, 1, 3), so a one-page file gets one Tesseract with
// P threads and a longer one P Tesseracts with one each); CPU-seconds of each process (with its
// children) beside. Each text layer is read back by `pdftotext` against the reference text.
// OCRmyPDF gets the options its documentation recommends for the case: `--rotate-pages --deskew`
// on the files whose corpus manifest features say `rotated` or `skewed`. Ours has no such
// options: it reads a turned page in its text's direction and writes skewed lines straight in the
// text layer, but keeps the page image as it is (neither turns nor deskews it).
// OCRmyPDF comes from PyPI into a venv under bench/out (made here on the first run, with pip);
// it uses the machine's Tesseract and Ghostscript.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type OursConfig, runOurs, timedProcess } from "./ocr-speed";

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
  /** The corpus manifest's features (`rotated`, `skewed`, ...). */
  features: string[];
}

/** Every PDF with the `scanned` feature in the corpus manifest, plus the OCR reference scan. */
export function scannedPdfs(corpusDir: string): Scan[] {
  const linn = readFileSync(join(corpusDir, "ocr/ocrmypdf-linn-brochure-scan.gt.txt"), "utf8");
  const out: Scan[] = [
    {
      file: "ocrmypdf-linn-brochure-scan.pdf",
      path: join(corpusDir, "ocr/ocrmypdf-linn-brochure-scan.pdf"),
      pages: 1,
      reference: linn,
      features: ["scanned"],
    },
  ];
  const rows = readFileSync(join(corpusDir, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const head = rows[0]!.split("\t");
  const col = (name: string) => head.indexOf(name);
  for (const line of rows.slice(1)) {
    const f = line.split("\t");
    const features = (f[col("features")] ?? "").split(",");
    if (f[col("type")] !== "pdf" || !features.includes("scanned")) continue;
    const pages = Number(f[col("pages")]) || 1;
    const source = (f[col("source_path")] ?? "").split("/").pop()!;
    out.push({
      file: f[col("file")]!,
      path: join(corpusDir, "files", f[col("file")]!),
      pages,
      reference: LINN_SOURCES.has(source) ? Array(pages).fill(linn).join("\n\n") : null,
      features,
    });
  }
  return out;
}

/** The files `--quick` compares: two one-page scans, the plain brochure and the one both turned
 * and skewed (so the quick run exercises OCRmyPDF's --rotate-pages --deskew). */
export const QUICK_SCANS = ["ocrmypdf-linn-brochure-scan.pdf", "scanned-rotated-skewed.pdf"];

/** The venv's ocrmypdf, installed on first use; null (with the reason) when pip cannot. */
export function ensureOcrmypdf(outDir: string): { bin: string | null; version: string; why?: string } {
  const venv = join(outDir, "ocrmypdf-venv");
  const bin = join(venv, "bin/ocrmypdf");
  if (!existsSync(bin)) {
    mkdirSync(outDir, { recursive: true });
    const mk = spawnSync("python3", ["-m", "venv", venv], { encoding: "utf8" });
    if (mk.status !== 0) return { bin: null, version: "", why: `python3 -m venv failed: ${mk.stderr.trim()}` };
    const pip = spawnSync(join(venv, "bin/pip"), ["install", "-q", OCRMYPDF], { encoding: "utf8" });
    if (pip.status !== 0)
      return { bin: null, version: "", why: `pip install ${OCRMYPDF} failed: ${pip.stderr.trim().split("\n").at(-1)}` };
  }
  const v = spawnSync(bin, ["--version"], { encoding: "utf8" });
  return { bin, version: v.stdout.trim() };
}

/** The options OCRmyPDF's documentation recommends for this scan: pages turned or skewed are
 * turned upright (`--rotate-pages`, orientation detection) and straightened (`--deskew`). */
export function caseOptions(scan: Scan): string[] {
  return scan.features.includes("rotated") || scan.features.includes("skewed") ? ["--rotate-pages", "--deskew"] : [];
}

/** OCRmyPDF on one file, whole process: `-j jobs`, pages that carry text skipped (as ours does),
 * plain PDF output (ours is not PDF/A either), the case's options. */
export async function runOcrmypdf(
  bin: string,
  scan: Scan,
  output: string,
  jobs: number,
): Promise<{ ms: number; cpuMs: number; maxRssKb: number; ok: boolean; err: string; options: string[] }> {
  const options = caseOptions(scan);
  // --tesseract-timeout: OCRmyPDF's default (180 s per page) is exceeded on a loaded machine,
  // and the page is then written without text (read-back CER 100%), which says nothing about
  // its layer. OMP_THREAD_LIMIT is left to OCRmyPDF (it sets it from -j and the page count).
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.OMP_THREAD_LIMIT;
  const r = await timedProcess(
    [
      bin,
      "-j",
      String(jobs),
      "--skip-text",
      "--output-type",
      "pdf",
      "-l",
      "eng",
      "--tesseract-timeout",
      "3600",
      ...options,
      "-q",
      scan.path,
      output,
    ],
    env,
    /(?!)/,
  );
  return {
    ms: r.wallMs,
    cpuMs: r.cpuMs,
    maxRssKb: r.maxRssKb,
    ok: r.code === 0,
    err: r.stderr.trim().split("\n").at(-1) ?? "",
    options,
  };
}

/** `pdftotext` of a PDF (every page, pages separated by blank lines). */
export function readBack(pdf: string): string {
  const r = spawnSync("pdftotext", [pdf, "-"], { encoding: "utf8" });
  return r.status === 0 ? r.stdout.replace(/\f/g, "\n\n") : "";
}

export interface ScanResult {
  file: string;
  pages: number;
  features: string[];
  ours: {
    wholeMs: number;
    loadMs: number;
    warmMs: number;
    cpuMs: number;
    maxRssKb: number;
    cer: number | null;
    bow: number | null;
  };
  theirs: {
    ms: number;
    cpuMs: number;
    maxRssKb: number;
    options: string[];
    error: string | null;
    cer: number | null;
    bow: number | null;
  } | null;
}

/** Ours (one whole process per file, `threads` intra-op threads) and, when `bin` is given,
 * OCRmyPDF (`-j threads`) on every scan, in turn. */
export async function compareSearchable(
  root: string,
  outDir: string,
  scans: Scan[],
  ours: OursConfig,
  bin: string | null,
  score: (ref: string, hyp: string) => { cer: number; bow: number },
): Promise<ScanResult[]> {
  const oursDir = join(outDir, "searchable-ours");
  const theirsDir = join(outDir, "searchable-ocrmypdf");
  mkdirSync(oursDir, { recursive: true });
  mkdirSync(theirsDir, { recursive: true });
  const out: ScanResult[] = [];
  for (const [i, scan] of scans.entries()) {
    console.error(`bench:   searchable PDF ${scan.file}`);
    const runOursOne = async () => {
      const r = await runOurs(root, [[{ file: scan.path, turned: false }]], ours, {
        output: "searchable_pdf",
        keepDir: oursDir,
      });
      const s = r.slots[0]!;
      return { wholeMs: s.wallMs, loadMs: s.loadMs, warmMs: s.wallMs - s.loadMs, cpuMs: s.cpuMs, maxRssKb: s.maxRssKb };
    };
    const runTheirs = () =>
      bin ? runOcrmypdf(bin, scan, join(theirsDir, scan.file), ours.threads) : Promise.resolve(null);
    let o: Awaited<ReturnType<typeof runOursOne>>;
    let t: Awaited<ReturnType<typeof runTheirs>>;
    if (i % 2 === 0) {
      o = await runOursOne();
      t = await runTheirs();
    } else {
      t = await runTheirs();
      o = await runOursOne();
    }
    const q = (pdf: string) =>
      scan.reference === null ? { cer: null, bow: null } : score(scan.reference, readBack(pdf));
    out.push({
      file: scan.file,
      pages: scan.pages,
      features: scan.features.filter((f) => f === "rotated" || f === "skewed"),
      ours: { ...o, ...q(join(oursDir, scan.file)) },
      theirs: t && {
        ms: t.ms,
        cpuMs: t.cpuMs,
        maxRssKb: t.maxRssKb,
        options: t.options,
        error: t.ok ? null : t.err,
        ...(t.ok ? q(join(theirsDir, scan.file)) : { cer: null, bow: null }),
      },
    });
  }
  return out;
}
