// The OCR evaluation set (issue 18 item 1, on the evaluation sets of issue 37 item 3), built by
// rule from the born-digital PDFs of the evaluation set nobody tunes on (scripts/bench/eval-set.ts,
// bench/README.md, "Evaluation sets"), never hand-picked: every page whose `pdftotext` text has at least
// MIN_REFERENCE_CHARS non-blank characters, rasterised in grey at 300 dpi (reference: that page's
// `pdftotext` text), and for a hash-chosen half of those pages one degraded copy: 150 or 200 dpi,
// turned 0.5-2 degrees, Gaussian noise, and for half of those JPEG compression at quality 50.
// Left out: files with invisible text (text render mode 3: a text layer over a scan is some OCR's
// output, not a reference, and hidden text is not on the image); pages covered by one image (scans,
// whatever text they carry); pages whose text cannot be what the image shows (replacement, control
// or private-use characters, one letter repeated, words scattered into letters: test files of text
// extraction bugs); pages over twice A3; and pages with the same or nearly the same text as a page
// earlier by file name and page (so no page is in both halves). Each page gets a layout class (pdftotext -bbox-layout
// geometry) and the split of its PDF (by the sha256 of the file's bytes, from the manifest).
// Pages mostly in neither Latin nor CJK script are classed "other-script": in the full set, never
// in the samples (the engines are compared with Tesseract's English model).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { evalFiles, type EvalSplit } from "./eval-set";

export type LayoutClass = "1-col" | "2-col" | "3+col" | "table" | "figure" | "math" | "cjk" | "other-script";
export type Split = EvalSplit;
export type Variant = "300dpi" | "150dpi-noisy" | "200dpi-noisy" | "150dpi-noisy-jpeg" | "200dpi-noisy-jpeg";

export interface EvalPage {
  /** Image file name (also the row's name in the report). */
  name: string;
  /** Page identity (source file and 1-based page): a page's degraded copy shares it. */
  pageId: string;
  /** The evaluation set file (manifest name). */
  source: string;
  page: number;
  variant: Variant;
  cls: LayoutClass;
  /** The split of the source PDF. */
  split: Split;
  /** In the default sample (SAMPLE_SIZE images per split). */
  sampled: boolean;
  /** In the quick sample (the first QUICK_SIZE of the default sample per split). */
  quick: boolean;
  reference: string;
  /** Produces the image (rasterised on first use, then cached); returns its path. */
  image: () => string;
}

/** Pages with fewer non-blank reference characters are not OCR test pages. */
export const MIN_REFERENCE_CHARS = 50;
/** Images per split in the default sample: about 2 minutes of OCR of one split's sample for both
 * engines on 2 cores at about 1 s per page. */
export const SAMPLE_SIZE = 60;
/** Images per split in the quick sample. */
export const QUICK_SIZE = 16;
/** Pages over twice the area of A3 are left out (posters and drawings: tens of megapixels). */
const MAX_PAGE_AREA_PT = 2 * 842 * 1191;
/** JPEG quality of the compressed degraded copies. */
const JPEG_QUALITY = 50;

const sha = (s: string) => createHash("sha256").update(s).digest();
/** Part of the key of the cached per-page facts: raise it when classify() or a rule that fills
 * the facts changes, so no cache from older rules is read. */
const FACTS_VERSION = 2;

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 256 << 20, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.error ?? r.stderr}`);
  return r.stdout;
}

/** Like run, but "" when the tool fails (broken test files are expected here). */
function tryRun(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 256 << 20, timeout: 300_000 });
  return r.status === 0 ? r.stdout : "";
}

interface Box {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}
interface BLine extends Box {
  block: number;
  chars: number;
}

/** Lines of a page from `pdftotext -bbox-layout` (each with its block index), and the page width. */
function bboxLines(pdf: string, page: number): { width: number; lines: BLine[] } {
  const xml = run("pdftotext", ["-bbox-layout", "-f", String(page), "-l", String(page), pdf, "-"]);
  const width = Number(/<page width="([\d.]+)"/.exec(xml)?.[1] ?? 612);
  const lines: BLine[] = [];
  let block = -1;
  const attr = (s: string, k: string) => Number(new RegExp(`${k}="([-\\d.]+)"`).exec(s)?.[1] ?? 0);
  for (const m of xml.matchAll(/<(block|line) ([^>]*)>|<\/line>|<word [^>]*>([^<]*)<\/word>/g)) {
    if (m[1] === "block") block++;
    else if (m[1] === "line")
      lines.push({
        x0: attr(m[2]!, "xMin"),
        y0: attr(m[2]!, "yMin"),
        x1: attr(m[2]!, "xMax"),
        y1: attr(m[2]!, "yMax"),
        block,
        chars: 0,
      });
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
  if (
    chars.filter((c) => /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u.test(c)).length >
    0.2 * n
  )
    return "cjk";
  const letters = chars.filter((c) => /\p{L}/u.test(c));
  if (letters.filter((c) => !/\p{Script=Latin}/u.test(c)).length > 0.3 * Math.max(1, letters.length))
    return "other-script";
  const { width, lines } = bboxLines(pdf, page);
  const sameRow = (a: Box, b: Box) =>
    Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0) > 0.5 * Math.min(a.y1 - a.y0, b.y1 - b.y0);
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
  return Buffer.concat([
    sig,
    chunk("IHDR", ihdr),
    chunk("pHYs", phys),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** 8-bit grey baseline JPEG of `quality` by libjpeg-turbo's cjpeg (Debian libjpeg-turbo-progs),
 * with the resolution written into its JFIF header (cjpeg writes none from a PGM). */
export function greyJpeg(w: number, h: number, px: Uint8Array, dpi: number, quality: number): Buffer {
  const pgm = Buffer.concat([Buffer.from(`P5\n${w} ${h}\n255\n`), px]);
  const r = spawnSync("cjpeg", ["-quality", String(quality), "-grayscale"], {
    input: pgm,
    maxBuffer: 1 << 30,
    timeout: 300_000,
  });
  if (r.status !== 0) throw new Error(`cjpeg (Debian libjpeg-turbo-progs) failed: ${r.error?.message ?? r.stderr}`);
  const jpg = Buffer.from(r.stdout);
  // APP0 "JFIF\0" right after SOI: version at 11-12, units at 13 (1 = dots per inch), densities at 14-17.
  if (jpg.toString("latin1", 6, 11) !== "JFIF\0") throw new Error("cjpeg wrote no JFIF header");
  jpg[13] = 1;
  jpg.writeUInt16BE(dpi, 14);
  jpg.writeUInt16BE(dpi, 16);
  return jpg;
}

/** Rasterises a page in grey at `dpi`, turns it by `skewDeg` (bilinear, white outside), adds
 * Gaussian noise of standard deviation `sigma` grey levels, and writes a PNG, or a JPEG of
 * quality `jpeg` when given. */
export function degrade(
  pdf: string,
  page: number,
  dpi: number,
  skewDeg: number,
  sigma: number,
  seed: number,
  out: string,
  jpeg?: number,
) {
  const prefix = `${out}.tmp`;
  run("pdftoppm", ["-r", String(dpi), "-f", String(page), "-l", String(page), "-gray", "-singlefile", pdf, prefix]);
  const pgm = readFileSync(`${prefix}.pgm`);
  rmSync(`${prefix}.pgm`, { force: true });
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
      let v =
        (at(x0, y0) * (1 - fx) + at(x0 + 1, y0) * fx) * (1 - fy) +
        (at(x0, y0 + 1) * (1 - fx) + at(x0 + 1, y0 + 1) * fx) * fy;
      // Box-Muller.
      v += sigma * Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
      dst[y * w + x] = Math.max(0, Math.min(255, Math.round(v)));
    }
  }
  writeFileSync(out, jpeg ? greyJpeg(w, h, dst, dpi, jpeg) : greyPng(w, h, dst, dpi));
}

interface PageFacts {
  reference: string;
  cls: LayoutClass;
  area: number;
  scan: boolean;
}
interface FileFacts {
  invisibleText: boolean;
  pages: PageFacts[];
}

/** Whether any content of the PDF draws text in render mode 3 (invisible: an OCR layer). */
function hasInvisibleText(pdf: string): boolean {
  const r = spawnSync("qpdf", ["--qdf", "--object-streams=disable", pdf, "-"], {
    maxBuffer: 1 << 30,
    timeout: 300_000,
  });
  return /(^|[^\d.])3\s+Tr\b/m.test((r.stdout ?? Buffer.alloc(0)).toString("latin1"));
}

/** Whether one image covers 80% of the page or more: a scan, whatever text lies over or under it
 * (a born-digital page on a full-page background goes with them: its text is not checked). */
function coveredByImage(pdf: string, page: number, area: number): boolean {
  return tryRun("pdfimages", ["-list", "-f", String(page), "-l", String(page), pdf])
    .split("\n")
    .slice(2)
    .map((r) => r.trim().split(/\s+/))
    .some(
      (c) =>
        c.length > 13 &&
        c[2] === "image" &&
        (Number(c[3]) / Number(c[12])) * 72 * (Number(c[4]) / Number(c[13])) * 72 >= 0.8 * area,
    );
}

/** Why a page's text is no reference for what its image shows, or null. Test files of text
 * extraction bugs map glyphs to wrong characters: one letter repeated ("aaaa", "oooo"), or words
 * scattered into letters. */
function unfitReference(text: string): string | null {
  const chars = [...text.replace(/\s+/g, "")];
  if (chars.filter((c) => /[\uFFFD\p{Cc}\p{Co}]/u.test(c)).length > 0.05 * chars.length)
    return "unreadable reference text";
  const counts = new Map<string, number>();
  for (const c of chars) if (/\p{L}/u.test(c)) counts.set(c, (counts.get(c) ?? 0) + 1);
  if (Math.max(0, ...counts.values()) > 0.5 * chars.length) return "reference text one letter repeated";
  const words = text.split(/\s+/).filter((w) => /^\p{Script=Latin}+$/u.test(w));
  if (words.length >= 50 && words.filter((w) => w.length <= 2).length > 0.7 * words.length)
    return "reference text scattered letters";
  return null;
}

const normalised = (text: string) => text.replace(/\s+/g, "");

/** Word trigrams of a text, for near-duplicate pages. */
function trigrams(text: string): Set<string> {
  const w = text.toLowerCase().split(/\s+/).filter(Boolean);
  return new Set(w.slice(2).map((_, i) => `${w[i]} ${w[i + 1]} ${w[i + 2]}`));
}

/** The whole OCR evaluation set over the evaluation set in `evalDir` (`cacheDir` keeps the images
 * and the per-page facts between runs). `skipped` counts the pages left out, by reason. */
export function evalSet(
  evalDir: string,
  cacheDir: string,
): { pages: EvalPage[]; blankPages: string[]; skipped: Record<string, number> } {
  mkdirSync(cacheDir, { recursive: true });
  const factsFile = join(cacheDir, "facts.json");
  // Keyed by the rules' version and the file's sha256: the facts change only with the rules.
  const facts: Record<string, FileFacts> = existsSync(factsFile) ? JSON.parse(readFileSync(factsFile, "utf8")) : {};
  const pages: EvalPage[] = [];
  const blankPages: string[] = [];
  const skipped: Record<string, number> = {};
  const skip = (why: string) => (skipped[why] = (skipped[why] ?? 0) + 1);
  const seenText = new Set<string>();
  const seenGrams = new Map<string, number[]>();
  const files = evalFiles()
    .filter((f) => f.pages >= 1)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const f of files) {
    const pdf = join(evalDir, "pdf", f.name);
    const key = `${FACTS_VERSION}:${f.sha256}`;
    if (!facts[key]) {
      const texts = tryRun("pdftotext", ["-q", pdf, "-"]).split("\f");
      const invisibleText = hasInvisibleText(pdf);
      facts[key] = {
        invisibleText,
        pages: Array.from({ length: f.pages }, (_, i) => {
          const reference = texts[i] ?? "";
          if (invisibleText || normalised(reference).length < MIN_REFERENCE_CHARS || unfitReference(reference))
            return { reference, cls: "1-col", area: 0, scan: false };
          const size = /<page width="([\d.]+)" height="([\d.]+)"/.exec(
            tryRun("pdftotext", ["-bbox", "-f", String(i + 1), "-l", String(i + 1), pdf, "-"]),
          );
          const area = size ? Number(size[1]) * Number(size[2]) : 0;
          return {
            reference,
            cls: classify(pdf, i + 1, reference),
            area,
            scan: area > 0 && coveredByImage(pdf, i + 1, area),
          };
        }),
      };
      writeFileSync(factsFile, JSON.stringify(facts));
    }
    const ff = facts[key]!;
    const stem = f.name.replace(/\.pdf$/i, "").replaceAll("/", "__");
    for (const [i, { reference, cls, area, scan }] of ff.pages.entries()) {
      const page = i + 1;
      const pageId = `${stem}-p${String(page).padStart(3, "0")}`;
      const text = normalised(reference);
      if (ff.invisibleText) {
        skip("in a file with invisible text (an OCR layer or hidden text)");
        continue;
      }
      if (text.length < MIN_REFERENCE_CHARS) {
        blankPages.push(pageId);
        skip(`under ${MIN_REFERENCE_CHARS} characters of text`);
        continue;
      }
      const unfit = unfitReference(reference);
      if (unfit) {
        skip(unfit);
        continue;
      }
      if (scan) {
        skip("an image over 80% of the page (a scan or a full-page background)");
        continue;
      }
      if (!area || area > MAX_PAGE_AREA_PT) {
        skip(area ? "over twice A3" : "no page size");
        continue;
      }
      // Near duplicates: 80% of the page's word trigrams on one earlier page (or the same text).
      const grams = trigrams(reference);
      const overlap = new Map<number, number>();
      for (const g of grams) for (const k of seenGrams.get(g) ?? []) overlap.set(k, (overlap.get(k) ?? 0) + 1);
      if (seenText.has(text) || [...overlap.values()].some((n) => n >= 0.8 * grams.size)) {
        skip("the same or nearly the same text as an earlier page");
        continue;
      }
      seenText.add(text);
      const id = seenText.size;
      for (const g of grams) seenGrams.set(g, [...(seenGrams.get(g) ?? []), id]);
      const base = { pageId, source: f.name, page, cls, split: f.split, sampled: false, quick: false, reference };
      const clean = join(cacheDir, `${pageId}-300dpi.png`);
      pages.push({
        ...base,
        name: `${pageId}-300dpi.png`,
        variant: "300dpi",
        image: () => {
          if (!existsSync(clean))
            run("pdftoppm", [
              "-r",
              "300",
              "-f",
              String(page),
              "-l",
              String(page),
              "-gray",
              "-png",
              "-singlefile",
              pdf,
              clean.replace(/\.png$/, ""),
            ]);
          return clean;
        },
      });
      // Half the pages again at 150 or 200 dpi, turned 0.5-2 degrees either way, with noise of
      // sigma 6-14 grey levels; half of those as JPEG of quality 50 (what a phone or an office
      // scanner's "small file" setting gives).
      const h = sha(`${pageId}#degraded`);
      if (h[0]! % 2 === 1) continue;
      const dpi = h[1]! % 2 ? 150 : 200;
      const skew = (h[2]! % 2 ? 1 : -1) * (0.5 + (h[3]! / 255) * 1.5);
      const sigma = 6 + (h[4]! / 255) * 8;
      const jpeg = h[5]! % 2 === 0;
      const variant = `${dpi}dpi-noisy${jpeg ? "-jpeg" : ""}` as Variant;
      const file = join(cacheDir, `${pageId}-${variant}.${jpeg ? "jpg" : "png"}`);
      pages.push({
        ...base,
        name: `${pageId}-${variant}.${jpeg ? "jpg" : "png"}`,
        variant,
        image: () => {
          if (!existsSync(file))
            degrade(pdf, page, dpi, skew, sigma, h.readUInt32BE(8), file, jpeg ? JPEG_QUALITY : undefined);
          return file;
        },
      });
    }
  }
  // The samples, fixed by hash before any result, spread over the PDFs so no long document fills
  // them: per split, in rounds over the PDFs in order of their sha256, each round taking the next
  // image of each PDF in order of the sha256 of the image's name; other-script pages never.
  const bySha = new Map(files.map((f) => [f.name, f.sha256]));
  for (const split of ["tune", "report"] as const) {
    const queues = new Map<string, EvalPage[]>();
    for (const p of pages.filter((p) => p.split === split && p.cls !== "other-script"))
      queues.set(p.source, [...(queues.get(p.source) ?? []), p]);
    for (const q of queues.values()) q.sort((a, b) => Buffer.compare(sha(a.name), sha(b.name)));
    const order = [...queues.keys()].sort((a, b) => (bySha.get(a)! < bySha.get(b)! ? -1 : 1));
    let taken = 0;
    for (let round = 0; taken < SAMPLE_SIZE && order.some((f) => queues.get(f)!.length > round); round++) {
      for (const f of order) {
        const p = queues.get(f)![round];
        if (!p || taken === SAMPLE_SIZE) continue;
        p.sampled = true;
        p.quick = taken < QUICK_SIZE;
        taken++;
      }
    }
  }
  return { pages, blankPages, skipped };
}
