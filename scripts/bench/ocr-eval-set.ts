// The OCR evaluation set of issue 18 (item 1), built from the corpus by rule, never hand-picked:
// every page of every born-digital, unencrypted corpus PDF rasterised at 300 dpi (reference: that
// page's `pdftotext` text), a hash-chosen share of them again at 150 or 200 dpi with mild skew and
// noise, and the corpus scans (ocr/ images with references, scanned PDFs of the LinnSequencer page).
// Each page gets a layout class (pdftotext -bbox-layout geometry) and a tune/holdout split (hash).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { scannedPdfs } from "./ocrmypdf-compare";

export type LayoutClass = "1-col" | "2-col" | "3+col" | "table" | "figure" | "math" | "cjk" | "other-script" | "scan";
export type Split = "tune" | "holdout";

export interface EvalPage {
  /** Image file name (also the row's name in the report). */
  name: string;
  /** Page identity (source file and 1-based page): the split and the samples hang on it, so a
   * page's degraded copies fall in its split. */
  pageId: string;
  source: string;
  page: number;
  variant: "300dpi" | "150dpi-noisy" | "200dpi-noisy" | "scan";
  cls: LayoutClass;
  split: Split;
  /** Whether the default (sampled) run includes it. */
  sampled: boolean;
  reference: string;
  /** Produces the image (rasterised on first use, then cached); returns its path. */
  image: () => string;
}

const sha = (s: string) => createHash("sha1").update(s).digest();
/** Tune when the first byte of the page id's SHA-1 is below 128: half the pages, fixed forever. */
export const splitOf = (pageId: string): Split => (sha(pageId)[0]! < 128 ? "tune" : "holdout");
/** Pages per PDF in the default run: the ones with the smallest SHA-1 of their page id. */
const SAMPLE_PER_FILE = 6;
/** Pages with fewer non-blank reference characters are not OCR test pages (blank pages). */
const MIN_REFERENCE_CHARS = 16;

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 256 << 20 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

interface Box { x0: number; y0: number; x1: number; y1: number }
interface BLine extends Box { block: number; chars: number }

/** Lines of a page from `pdftotext -bbox-layout` (each with its block index), and the page width. */
function bboxLines(pdf: string, page: number): { width: number; lines: BLine[] } {
  const xml = run("pdftotext", ["-bbox-layout", "-f", String(page), "-l", String(page), pdf, "-"]);
  const width = Number(/<page width="([\d.]+)"/.exec(xml)?.[1] ?? 612);
  const lines: BLine[] = [];
  let block = -1;
  const attr = (s: string, k: string) => Number(new RegExp(`${k}="([-\\d.]+)"`).exec(s)?.[1] ?? 0);
  for (const m of xml.matchAll(/<(block|line) ([^>]*)>|<\/line>|<word [^>]*>([^<]*)<\/word>/g)) {
    if (m[1] === "block") block++;
    else if (m[1] === "line") lines.push({ x0: attr(m[2]!, "xMin"), y0: attr(m[2]!, "yMin"), x1: attr(m[2]!, "xMax"), y1: attr(m[2]!, "yMax"), block, chars: 0 });
    else if (m[3] !== undefined && lines.length) lines.at(-1)!.chars += m[3].length;
  }
  return { width, lines };
}

/** Layout class by rule, first match wins: CJK (over 20% of the characters Han/kana/Hangul);
 * other script (over 30% of the letters not Latin); table (at least 4 rows of three or more
 * side-by-side lines, holding at least 25% of the lines); columns (the largest k such that at least
 * 35% of the lines of 15% of the page width or more sit in a row of k such lines, side by side):
 * 3+col, 2-col; figure (an image of at least 150x150 px on the page, or a line opening with a
 * figure caption label); math (over 2% of the characters mathematical operators or Greek); else 1-col. */
export function classify(pdf: string, page: number, text: string): LayoutClass {
  const chars = [...text.replace(/\s+/g, "")];
  const n = Math.max(1, chars.length);
  if (chars.filter((c) => /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(c)).length > 0.2 * n) return "cjk";
  const letters = chars.filter((c) => /\p{L}/u.test(c));
  if (letters.filter((c) => !/\p{Script=Latin}/u.test(c)).length > 0.3 * Math.max(1, letters.length)) return "other-script";
  const { width, lines } = bboxLines(pdf, page);
  const sameRow = (a: Box, b: Box) => Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > 0.5 * Math.min(a.y1 - a.y0, b.y1 - b.y0);
  const apart = (a: Box, b: Box) => a.x1 < b.x0 || b.x1 < a.x0;
  // Rows: lines side by side (vertical overlap over half the smaller height, no horizontal overlap).
  const rowSize = lines.map((l) => 1 + lines.filter((o) => o !== l && sameRow(l, o) && apart(l, o)).length);
  const tableLines = rowSize.filter((k) => k >= 3).length;
  const tableRows = new Set(lines.filter((_, i) => rowSize[i]! >= 3).map((l) => Math.round(l.y0 / 4))).size;
  if (tableRows >= 4 && tableLines >= 0.25 * lines.length) return "table";
  const wide = lines.filter((l) => l.x1 - l.x0 >= 0.15 * width);
  const k = wide.map((l) => 1 + wide.filter((o) => o !== l && sameRow(l, o) && apart(l, o)).length);
  const share = (min: number) => k.filter((v) => v >= min).length / Math.max(1, wide.length);
  if (share(3) >= 0.35) return "3+col";
  if (share(2) >= 0.35) return "2-col";
  const images = run("pdfimages", ["-list", "-f", String(page), "-l", String(page), pdf])
    .split("\n")
    .slice(2)
    .map((r) => r.trim().split(/\s+/))
    .filter((c) => c.length > 4 && Number(c[3]) >= 150 && Number(c[4]) >= 150 && c[2] !== "smask");
  if (images.length || /^\s*(Fig(ure|\.)?|Abbildung|Abb\.|Chart|Photo)\s*[0-9IVX]/im.test(text)) return "figure";
  if (chars.filter((c) => /[\u2200-\u22FF\u0370-\u03FF\u2190-\u21FF]/.test(c)).length > 0.02 * n) return "math";
  return "1-col";
}

/** A seeded PRNG (mulberry32), so the noise of a page is the same in every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 8-bit grey PNG with its resolution (pHYs), so the engine reads the page at its real size. */
export function greyPng(w: number, h: number, px: Uint8Array, dpi: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const td = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 0;
  const phys = Buffer.alloc(9);
  const ppm = Math.round(dpi / 0.0254);
  phys.writeUInt32BE(ppm, 0);
  phys.writeUInt32BE(ppm, 4);
  phys[8] = 1;
  const raw = Buffer.alloc((w + 1) * h);
  for (let y = 0; y < h; y++) raw.set(px.subarray(y * w, (y + 1) * w), y * (w + 1) + 1);
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk("IHDR", ihdr), chunk("pHYs", phys), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

/** Rasterises a page in grey at `dpi`, turns it by `skewDeg` (bilinear, white outside) and adds
 * Gaussian noise of standard deviation `sigma` grey levels; writes a PNG. */
function degrade(pdf: string, page: number, dpi: number, skewDeg: number, sigma: number, seed: number, out: string) {
  const prefix = `${out}.tmp`;
  run("pdftoppm", ["-r", String(dpi), "-f", String(page), "-l", String(page), "-gray", "-singlefile", pdf, prefix]);
  const pgm = readFileSync(`${prefix}.pgm`);
  const head = /^P5\s+(\d+)\s+(\d+)\s+(\d+)\s/.exec(pgm.subarray(0, 64).toString("latin1"))!;
  const [w, h] = [Number(head[1]), Number(head[2])];
  const src = pgm.subarray(head[0].length);
  const dst = new Uint8Array(w * h);
  const a = (skewDeg * Math.PI) / 180;
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  const [cx, cy] = [w / 2, h / 2];
  const rnd = prng(seed);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // Inverse mapping: where this output pixel comes from in the source.
      const sx = cos * (x - cx) + sin * (y - cy) + cx;
      const sy = -sin * (x - cx) + cos * (y - cy) + cy;
      const x0 = Math.floor(sx);
      const y0 = Math.floor(sy);
      const fx = sx - x0;
      const fy = sy - y0;
      const at = (xx: number, yy: number) => (xx < 0 || yy < 0 || xx >= w || yy >= h ? 255 : src[yy * w + xx]!);
      let v = (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) + (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
      // Box-Muller.
      v += sigma * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
      dst[y * w + x] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  writeFileSync(out, greyPng(w, h, dst, dpi));
  spawnSync("rm", ["-f", `${prefix}.pgm`]);
}

function manifest(corpusDir: string): { file: string; pages: number; features: string[] }[] {
  const rows = readFileSync(join(corpusDir, "MANIFEST.tsv"), "utf8").trim().split("\n");
  const head = rows[0]!.split("\t");
  return rows.slice(1).map((line) => {
    const f = line.split("\t");
    return { file: f[head.indexOf("file")]!, pages: Number(f[head.indexOf("pages")]) || 0, features: (f[head.indexOf("features")] ?? "").split(",") };
  });
}

/** The whole evaluation set (`cacheDir` keeps the images and the per-page facts between runs). */
export function evalSet(corpusDir: string, cacheDir: string): { pages: EvalPage[]; blankPages: string[] } {
  mkdirSync(cacheDir, { recursive: true });
  const factsFile = join(cacheDir, "facts.json");
  const facts: Record<string, { reference: string; cls: LayoutClass }> = existsSync(factsFile) ? JSON.parse(readFileSync(factsFile, "utf8")) : {};
  const pages: EvalPage[] = [];
  const blankPages: string[] = [];
  const pdfs = manifest(corpusDir).filter((m) => m.file.endsWith(".pdf") && m.features.includes("born-digital") && !m.features.some((f) => f.startsWith("encrypted")));
  for (const m of pdfs) {
    const pdf = join(corpusDir, "files", m.file);
    const count = Number(/Pages:\s+(\d+)/.exec(run("pdfinfo", [pdf]))?.[1] ?? m.pages);
    const stem = m.file.replace(/\.pdf$/, "");
    const ids = Array.from({ length: count }, (_, i) => `${stem}-p${String(i + 1).padStart(3, "0")}`);
    const sampled = new Set([...ids].sort((a, b) => Buffer.compare(sha(a), sha(b))).slice(0, SAMPLE_PER_FILE));
    for (const [i, pageId] of ids.entries()) {
      const page = i + 1;
      if (!facts[pageId]) {
        const reference = run("pdftotext", ["-f", String(page), "-l", String(page), pdf, "-"]);
        facts[pageId] = { reference, cls: reference.replace(/\s/g, "").length >= MIN_REFERENCE_CHARS ? classify(pdf, page, reference) : "1-col" };
      }
      const { reference, cls } = facts[pageId]!;
      if (reference.replace(/\s/g, "").length < MIN_REFERENCE_CHARS) {
        blankPages.push(pageId);
        continue;
      }
      const base = { pageId, source: m.file, page, cls, split: splitOf(pageId), sampled: sampled.has(pageId), reference };
      const clean = join(cacheDir, `${pageId}-300dpi.png`);
      pages.push({
        ...base,
        name: `${pageId}-300dpi.png`,
        variant: "300dpi",
        image: () => {
          if (!existsSync(clean)) run("pdftoppm", ["-r", "300", "-f", String(page), "-l", String(page), "-gray", "-png", "-singlefile", pdf, clean.replace(/\.png$/, "")]);
          return clean;
        },
      });
      // One page in four again at 150 dpi, one in four at 200 dpi, skewed by 0.3-1.5 degrees
      // either way, with noise of sigma 8-16 grey levels (mild: still easy for a reader).
      const h = sha(`${pageId}#degraded`);
      const dpi = h[0]! % 4 === 0 ? 150 : h[0]! % 4 === 1 ? 200 : 0;
      if (dpi) {
        const skew = (h[1]! % 2 ? 1 : -1) * (0.3 + (h[2]! / 255) * 1.2);
        const sigma = 8 + (h[3]! / 255) * 8;
        const file = join(cacheDir, `${pageId}-${dpi}dpi-noisy.png`);
        pages.push({
          ...base,
          name: `${pageId}-${dpi}dpi-noisy.png`,
          variant: dpi === 150 ? "150dpi-noisy" : "200dpi-noisy",
          image: () => {
            if (!existsSync(file)) degrade(pdf, page, dpi, skew, sigma, h.readUInt32BE(4), file);
            return file;
          },
        });
      }
    }
  }
  writeFileSync(factsFile, JSON.stringify(facts));
  // Corpus scans: the reference pages of ocr/ and every page of the scanned PDFs with a reference.
  const ocrDir = join(corpusDir, "ocr");
  for (const f of run("ls", [ocrDir]).split("\n").filter((f) => /\.(png|jpe?g)$/.test(f))) {
    const pageId = f.replace(/\.[a-z]+$/, "");
    const path = join(ocrDir, f);
    pages.push({ name: f, pageId, source: `ocr/${f}`, page: 1, variant: "scan", cls: "scan", split: splitOf(pageId), sampled: true, reference: readFileSync(join(ocrDir, `${pageId}.gt.txt`), "utf8"), image: () => path });
  }
  for (const s of scannedPdfs(corpusDir)) {
    if (s.reference === null) continue;
    const stem = s.file.replace(/\.pdf$/, "");
    const perPage = readFileSync(join(ocrDir, "ocrmypdf-linn-brochure-scan.gt.txt"), "utf8");
    for (let page = 1; page <= s.pages; page++) {
      const pageId = `${stem}-p${page}`;
      const file = join(cacheDir, `${pageId}-scan.png`);
      // Rendered at 300 dpi as displayed (a page the PDF turns stays turned: the OCR must find
      // the text's direction, as it must on the user's file).
      pages.push({
        name: `${pageId}-scan.png`,
        pageId,
        source: s.file,
        page,
        variant: "scan",
        cls: "scan",
        split: splitOf(pageId),
        sampled: true,
        reference: perPage,
        image: () => {
          if (!existsSync(file)) run("pdftoppm", ["-r", "300", "-f", String(page), "-l", String(page), "-gray", "-png", "-singlefile", s.path, file.replace(/\.png$/, "")]);
          return file;
        },
      });
    }
  }
  return { pages, blankPages };
}
