// Shared helpers of the document suites (render, redact, compress, pageops): the engine's CLI
// (examples/pagework.rs), timed runs of external tools with CPU-seconds and peak RSS (GNU time).
import { existsSync } from "node:fs";
import { join } from "node:path";

/** Where cargo builds: CARGO_TARGET_DIR, or cargo's own default (target/ in the clone). */
export const target = process.env.CARGO_TARGET_DIR || join(import.meta.dir, "../../target");
let built = false;
export function pagework(root: string): string {
  const bin = join(target, "release/examples/pagework");
  // Built (or found up to date) once per run, so the benchmark never measures a stale binary.
  if (!built) {
    const p = Bun.spawnSync(["cargo", "build", "--release", "-p", "engine", "--example", "pagework"], {
      cwd: root,
      env: { ...process.env, CARGO_TARGET_DIR: target },
      stderr: "inherit",
    });
    if (p.exitCode !== 0 && !existsSync(bin)) throw new Error("building examples/pagework failed");
    if (p.exitCode !== 0) console.error("bench: building examples/pagework failed; using the existing binary");
    built = true;
  }
  return bin;
}

export interface Timed {
  ms: number;
  /** CPU-seconds (user + system) of the process and everything it waited for. */
  cpuS: number;
  rssMb: number;
  code: number;
  out: string;
}
const TIME_FORMAT = "RSSKB=%M CPUS=%U+%S";
function parseTime(ms: number, code: number, stdout: string, stderr: string): Timed {
  const rss = Number(/RSSKB=(\d+)/.exec(stderr)?.[1] ?? 0) / 1024;
  const cpu = /CPUS=([\d.]+)\+([\d.]+)/.exec(stderr);
  // GNU time's own line is not the tool's output: keep the tool's messages only.
  const err = stderr.replace(
    /^(Command exited with non-zero status \d+|Command terminated by signal \d+|RSSKB=.*)\n?/gm,
    "",
  );
  return { ms, cpuS: cpu ? Number(cpu[1]) + Number(cpu[2]) : NaN, rssMb: rss, code, out: stdout + err };
}
/** Runs a command under /usr/bin/time: wall ms, CPU-seconds and peak RSS. */
export function timed(cmd: string[], env: Record<string, string> = {}): Timed {
  const t0 = performance.now();
  const p = Bun.spawnSync(["/usr/bin/time", "-f", TIME_FORMAT, ...cmd], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, ...env },
  });
  const ms = performance.now() - t0;
  return parseTime(ms, p.exitCode ?? -1, p.stdout.toString(), p.stderr.toString());
}
/** Runs commands at the same time, each under /usr/bin/time: wall ms until the last ends, CPU-seconds
 * summed, peak RSS the largest, code the first non-zero. How a single-threaded tool is given the
 * same number of cores as a multi-threaded one: one process per core, each on its share of the work. */
export async function timedTogether(cmds: string[][], env: Record<string, string> = {}): Promise<Timed> {
  const t0 = performance.now();
  const runs = await Promise.all(
    cmds.map(async (cmd) => {
      const p = Bun.spawn(["/usr/bin/time", "-f", TIME_FORMAT, ...cmd], {
        stdout: "pipe",
        stderr: "pipe",
        env: { ...process.env, ...env },
      });
      const [stdout, stderr, code] = await Promise.all([
        new Response(p.stdout).text(),
        new Response(p.stderr).text(),
        p.exited,
      ]);
      return { stdout, stderr, code };
    }),
  );
  const ms = performance.now() - t0;
  const each = runs.map((r) => parseTime(ms, r.code, r.stdout, r.stderr));
  return {
    ms,
    cpuS: each.reduce((a, t) => a + t.cpuS, 0),
    rssMb: Math.max(...each.map((t) => t.rssMb)),
    code: each.find((t) => t.code !== 0)?.code ?? 0,
    out: each.map((t) => t.out).join(""),
  };
}

export function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
export const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : "—");
export const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : "—");

// ---- shared by the compress / redact / pageops suites ----
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";

export const median = (v: number[]) => pct(v, 50);
export const bytesOf = (p: string) => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};
export function sh(cmd: string[]): string {
  const p = Bun.spawnSync(cmd, { stdout: "pipe", stderr: "pipe" });
  return p.stdout.toString();
}
/** Page count (qpdf), 0 when the file does not open. */
export function pageCount(file: string, password?: string): number {
  const n = Number(sh(["qpdf", ...(password ? [`--password=${password}`] : []), "--show-npages", file]).trim());
  if (Number.isFinite(n) && n > 0) return n;
  // qpdf gives up on some damaged files that poppler (and MuPDF) repair: ask pdfinfo.
  const m = /^Pages:\s+(\d+)/m.exec(sh(["pdfinfo", ...(password ? ["-upw", password] : []), file]));
  return m ? Number(m[1]) : 0;
}
/** Words of extractable text (pdftotext). */
export function wordCount(file: string): number {
  // Bounded in time and size: pdftotext expands decompression-bomb.pdf without limit (2.4 GB
  // after 5 min), and holding that in this process ran the machine out of memory (23 GB).
  return sh(["sh", "-c", 'timeout 60 pdftotext -q "$1" - | head -c 64000000', "sh", file]).split(/\s+/).filter(Boolean)
    .length;
}

export interface Grey {
  w: number;
  h: number;
  px: Uint8Array;
}
/** Reads a binary PGM (P5) file. */
export function readPgm(path: string): Grey {
  const b = readFileSync(path);
  const tokens: string[] = [];
  let i = 0;
  while (tokens.length < 4) {
    while (b[i] === 0x23 /* # */ || /\s/.test(String.fromCharCode(b[i]!))) {
      if (b[i] === 0x23) while (b[i] !== 0x0a) i++;
      i++;
    }
    let t = "";
    while (!/\s/.test(String.fromCharCode(b[i]!))) t += String.fromCharCode(b[i++]!);
    tokens.push(t);
  }
  i++; // one whitespace after maxval
  if (tokens[0] !== "P5") throw new Error(`${path}: not a P5 PGM`);
  const w = Number(tokens[1]),
    h = Number(tokens[2]);
  return { w, h, px: new Uint8Array(b.buffer, b.byteOffset + i, w * h) };
}
/** Greyscale renders (mutool draw -c gray) of pages 1..n at `dpi`. */
export function renderGrey(file: string, dir: string, tag: string, pages: number, dpi = 100): Grey[] {
  mkdirSync(dir, { recursive: true });
  Bun.spawnSync(
    [
      "timeout",
      "120",
      "mutool",
      "draw",
      "-q",
      "-r",
      String(dpi),
      "-c",
      "gray",
      "-o",
      join(dir, `${tag}-%d.pgm`),
      file,
      `1-${pages}`,
    ],
    { stderr: "pipe" },
  );
  const out: Grey[] = [];
  for (let p = 1; p <= pages; p++) {
    try {
      out.push(readPgm(join(dir, `${tag}-${p}.pgm`)));
    } catch {
      /* missing page */
    }
  }
  return out;
}
/** PSNR in dB over the common area (99 for identical images). */
export function psnr(a: Grey, b: Grey): number {
  const w = Math.min(a.w, b.w),
    h = Math.min(a.h, b.h);
  let se = 0;
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const d = a.px[y * a.w + x]! - b.px[y * b.w + x]!;
      se += d * d;
    }
  const mse = se / (w * h);
  return mse === 0 ? 99 : 10 * Math.log10((255 * 255) / mse);
}
/** Mean SSIM over 8x8 windows (stride 4), the usual constants (K1 0.01, K2 0.03, L 255). */
export function ssim(a: Grey, b: Grey): number {
  const w = Math.min(a.w, b.w),
    h = Math.min(a.h, b.h);
  const c1 = (0.01 * 255) ** 2,
    c2 = (0.03 * 255) ** 2;
  let sum = 0,
    n = 0;
  for (let y = 0; y + 8 <= h; y += 4)
    for (let x = 0; x + 8 <= w; x += 4) {
      let sa = 0,
        sb = 0,
        saa = 0,
        sbb = 0,
        sab = 0;
      for (let j = 0; j < 8; j++)
        for (let i = 0; i < 8; i++) {
          const va = a.px[(y + j) * a.w + x + i]!,
            vb = b.px[(y + j) * b.w + x + i]!;
          sa += va;
          sb += vb;
          saa += va * va;
          sbb += vb * vb;
          sab += va * vb;
        }
      const ma = sa / 64,
        mb = sb / 64;
      const va = saa / 64 - ma * ma,
        vb = sbb / 64 - mb * mb,
        cov = sab / 64 - ma * mb;
      sum += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      n++;
    }
  return n ? sum / n : 1;
}
/** Visual quality of `file` against `reference`: mean SSIM and PSNR over the first pages at 100 dpi. */
export function quality(reference: Grey[], file: string, dir: string, tag: string): { ssim: number; psnr: number } {
  const pages = renderGrey(file, dir, tag, reference.length);
  if (pages.length !== reference.length || !pages.length) return { ssim: 0, psnr: 0 };
  let s = 0,
    p = 0;
  pages.forEach((g, i) => {
    s += ssim(reference[i]!, g);
    p += Math.min(psnr(reference[i]!, g), 99);
  });
  for (const f of readdirSync(dir)) if (f.startsWith(`${tag}-`)) rmSync(join(dir, f));
  return { ssim: s / pages.length, psnr: p / pages.length };
}

/** JPEG size and components from its SOF marker. */
function jpegInfo(b: Uint8Array): { w: number; h: number; comps: number } {
  let i = 2;
  while (i < b.length) {
    const m = b[i + 1]!,
      len = (b[i + 2]! << 8) | b[i + 3]!;
    if (m >= 0xc0 && m <= 0xc2)
      return { h: (b[i + 5]! << 8) | b[i + 6]!, w: (b[i + 7]! << 8) | b[i + 8]!, comps: b[i + 9]! };
    i += 2 + len;
  }
  throw new Error("no SOF in JPEG");
}
/** A copy of `jpeg` whose pixels differ slightly for each `j` > 0: the first two AC
 * entries of every quantisation table are raised, so every page's image decodes to
 * different pixels (Ghostscript de-duplicates images by their decoded pixels). */
function variant(jpeg: Uint8Array, j: number): Uint8Array {
  const b = new Uint8Array(jpeg);
  if (j === 0) return b;
  let i = 2;
  while (i + 4 < b.length && b[i] === 0xff) {
    const m = b[i + 1]!,
      len = (b[i + 2]! << 8) | b[i + 3]!;
    if (m === 0xda) break;
    if (m === 0xdb) {
      let q = i + 4;
      while (q < i + 2 + len) {
        const wide = b[q]! >> 4,
          size = wide ? 128 : 64;
        const at = (z: number) => q + 1 + (wide ? 2 * z + 1 : z);
        b[at(1)] = Math.min(255, b[at(1)]! + (j % 5) + 1);
        b[at(2)] = Math.min(255, b[at(2)]! + Math.floor(j / 5) + 1);
        q += 1 + size;
      }
    }
    i += 2 + len;
  }
  return b;
}

/** A PDF of `n` pages, each one JPEG (cycled from `jpegs`) shown at `dpi` and filling the page.
 * A COM marker with the page number makes every image's bytes distinct (no de-duplication). */
export function jpegPdf(jpegs: Uint8Array[], n: number, dpi: number, out: string) {
  const parts: Buffer[] = [];
  const offsets: number[] = [];
  let pos = 0;
  const push = (b: Buffer) => {
    parts.push(b);
    pos += b.length;
  };
  const obj = (id: number, body: Buffer | string, stream?: Buffer) => {
    offsets[id] = pos;
    push(Buffer.from(`${id} 0 obj\n`));
    push(typeof body === "string" ? Buffer.from(body) : body);
    if (stream) {
      push(Buffer.from("\nstream\n"));
      push(stream);
      push(Buffer.from("\nendstream"));
    }
    push(Buffer.from("\nendobj\n"));
  };
  push(Buffer.from("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n", "latin1"));
  const kids = Array.from({ length: n }, (_, k) => `${3 + 3 * k} 0 R`).join(" ");
  obj(1, "<< /Type /Catalog /Pages 2 0 R >>");
  obj(2, `<< /Type /Pages /Count ${n} /Kids [${kids}] >>`);
  for (let k = 0; k < n; k++) {
    const src = variant(jpegs[k % jpegs.length]!, Math.floor(k / jpegs.length));
    const { w, h, comps } = jpegInfo(src);
    const com = Buffer.from(`page ${k + 1}`);
    const jpeg = Buffer.concat([
      Buffer.from(src.subarray(0, 2)),
      Buffer.from([0xff, 0xfe, 0, com.length + 2]),
      com,
      Buffer.from(src.subarray(2)),
    ]);
    const pw = (w * 72) / dpi,
      ph = (h * 72) / dpi;
    const page = 3 + 3 * k,
      img = page + 1,
      content = page + 2;
    const cs = comps === 1 ? "/DeviceGray" : comps === 4 ? "/DeviceCMYK /Decode [1 0 1 0 1 0 1 0]" : "/DeviceRGB";
    const draw = Buffer.from(`q ${pw.toFixed(3)} 0 0 ${ph.toFixed(3)} 0 0 cm /Im0 Do Q`);
    obj(
      page,
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${pw.toFixed(3)} ${ph.toFixed(3)}] /Resources << /XObject << /Im0 ${img} 0 R >> >> /Contents ${content} 0 R >>`,
    );
    obj(
      img,
      `<< /Type /XObject /Subtype /Image /Width ${w} /Height ${h} /BitsPerComponent 8 /ColorSpace ${cs} /Filter /DCTDecode /Length ${jpeg.length} >>`,
      jpeg,
    );
    obj(content, `<< /Length ${draw.length} >>`, draw);
  }
  const size = 3 + 3 * n;
  const xref = pos;
  let x = `xref\n0 ${size}\n0000000000 65535 f \n`;
  for (let id = 1; id < size; id++) x += `${String(offsets[id]).padStart(10, "0")} 00000 n \n`;
  push(Buffer.from(`${x}trailer\n<< /Size ${size} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`));
  writeFileSync(out, Buffer.concat(parts));
}

/** Generated large inputs, built once into outDir/gen: a 200-page text PDF (the 117-page
 * geotopo + the first 83 pages of the 352-page book, concatenated by qpdf) and a 50-page
 * photo PDF (corpus JPEGs shown at 300 dpi, one per page). */
export function generatedInputs(corpusDir: string, outDir: string): { text200: string; photo50: string } {
  const dir = join(outDir, "gen");
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => join(corpusDir, "files", n);
  const text200 = join(dir, "text-200-pages.pdf");
  if (!existsSync(text200)) {
    const p = Bun.spawnSync(
      [
        "qpdf",
        "--empty",
        "--pages",
        f("geotopo-117-pages.pdf"),
        f("freeculture-book-352-pages.pdf"),
        "1-83",
        "--",
        text200,
      ],
      { stderr: "pipe" },
    );
    if (p.exitCode !== 0 && p.exitCode !== 3) throw new Error(`qpdf concatenation failed: ${p.stderr}`);
  }
  const photo50 = join(dir, "photo-50-pages-300dpi.pdf");
  if (!existsSync(photo50)) {
    const jpegs = ["photo-exif-420dpi.jpg", "hebrew-typography.jpg", "map-multilingual-color.jpg"].map(
      (n) => new Uint8Array(readFileSync(f(n))),
    );
    jpegPdf(jpegs, 50, 300, photo50);
  }
  return { text200, photo50 };
}

/** 1-minute load average (/proc/loadavg): the runner records it before and after every suite. */
export function load1(): number {
  try {
    return Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
  } catch {
    return NaN;
  }
}

export interface ImageInfo {
  /** Images drawn (pdfimages -list rows of type image: every use on every page, inline ones too). */
  uses: number;
  /** Largest effective resolution on the page (ppi, the larger of x and y) of a colour or grey image. */
  maxPpi: number;
  /** The same for bitonal images (1 bit per component, one component). */
  maxBitonalPpi: number;
}
/** What `pdfimages -list` reports of a PDF's images; uses -1 when it fails. */
export function imageInfo(file: string): ImageInfo {
  const p = Bun.spawnSync(["timeout", "60", "pdfimages", "-list", file], { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) return { uses: -1, maxPpi: 0, maxBitonalPpi: 0 };
  let uses = 0,
    maxPpi = 0,
    maxBitonalPpi = 0;
  for (const line of p.stdout.toString().split("\n").slice(2)) {
    // page num type width height color comp bpc enc interp object ID x-ppi y-ppi size ratio
    const c = line.trim().split(/\s+/);
    if (c.length < 14 || c[2] !== "image") continue;
    uses++;
    const ppi = Math.max(Number(c[12]) || 0, Number(c[13]) || 0);
    if (c[6] === "1" && c[7] === "1") maxBitonalPpi = Math.max(maxBitonalPpi, ppi);
    else maxPpi = Math.max(maxPpi, ppi);
  }
  return { uses, maxPpi, maxBitonalPpi };
}

/** Seconds after which a run of any tool, ours or a reference, is stopped and counted as failed:
 * the same bound on both sides, short with --quick so that one file that hangs a tool cannot
 * take the quick run's time. */
export const timeLimitS = (quick: boolean) => (quick ? 20 : 120);
/** "timed out after N s" for timeout(1)'s exit code 124. */
export const timedOut = (code: number, limitS: number) => (code === 124 ? `timed out after ${limitS} s` : "");
