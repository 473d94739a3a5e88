// The pure parts of the per-page latency harness (scripts/bench/latency.ts): the seeded PRNG,
// the job mix, the open-loop schedule, percentiles, per-operation statistics, the knee of a
// rate sweep, and the synthetic input PDFs. Nothing here does I/O, so test/unit can check it.
import { deflateSync } from "node:zlib";

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so `--seed` repeats a run's mix. */
export function prng(seed: number): () => number {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What each mix name submits, and which synthetic input it needs: "text" = a born-digital PDF of
 * text pages, "image" = the same pages rendered to greyscale images (so OCR has to recognise them
 * instead of reading the text layer). */
export const operationTable: Record<
  string,
  { input: "text" | "image"; job: (fileId: string) => Record<string, unknown> }
> = {
  rotate: { input: "text", job: (id) => ({ operation: "rotate", file_id: id, options: { degrees: 90 } }) },
  compress: { input: "text", job: (id) => ({ operation: "compress", file_id: id, options: {} }) },
  "convert-jpg": { input: "text", job: (id) => ({ operation: "convert", file_id: id, options: { target: "jpg" } }) },
  "convert-docx": { input: "text", job: (id) => ({ operation: "convert", file_id: id, options: { target: "docx" } }) },
  split: { input: "text", job: (id) => ({ operation: "split", file_id: id, options: { mode: "every_page" } }) },
  ocr: { input: "image", job: (id) => ({ operation: "ocr", file_id: id, options: {} }) },
  searchable_pdf: { input: "image", job: (id) => ({ operation: "searchable_pdf", file_id: id, options: {} }) },
};

export const defaultMix = "rotate:1=0.25,rotate:10=0.2,compress:5=0.2,convert-jpg:3=0.2,ocr:1=0.15";

export interface MixEntry {
  /** The mix name (a key of operationTable). */
  op: string;
  pages: number;
  /** Share of the jobs, normalised so that the weights sum to 1. */
  weight: number;
}

/** `op:pages=weight,...` → entries with weights normalised to sum 1. Refuses unknown operations,
 * pages outside 1..maxPages, non-positive or non-numeric weights and repeated entries. */
export function parseMix(spec: string, maxPages = 1000): MixEntry[] {
  const out: MixEntry[] = [];
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const m = /^([a-z_-]+):(\d+)=([0-9]*\.?[0-9]+)$/.exec(part);
    if (!m) throw new Error(`--mix: "${part}" is not operation:pages=weight (e.g. ocr:1=0.3)`);
    const [, op, p, w] = m;
    if (!operationTable[op!])
      throw new Error(`--mix: unknown operation "${op}" (known: ${Object.keys(operationTable).join(", ")})`);
    const pages = Number(p);
    if (!Number.isInteger(pages) || pages < 1 || pages > maxPages)
      throw new Error(`--mix: pages must be 1..${maxPages} in "${part}"`);
    const weight = Number(w);
    if (!(weight > 0) || !Number.isFinite(weight)) throw new Error(`--mix: the weight must be above 0 in "${part}"`);
    if (out.some((e) => e.op === op && e.pages === pages)) throw new Error(`--mix: ${op}:${pages} appears twice`);
    out.push({ op: op!, pages, weight });
  }
  if (!out.length) throw new Error("--mix is empty");
  const total = out.reduce((a, e) => a + e.weight, 0);
  return out.map((e) => ({ ...e, weight: e.weight / total }));
}

/** The entry a uniform draw `u` in [0, 1) falls on, by cumulative weight. */
export function pickEntry(mix: MixEntry[], u: number): MixEntry {
  let acc = 0;
  for (const e of mix) {
    acc += e.weight;
    if (u < acc) return e;
  }
  return mix[mix.length - 1]!;
}

/** `0.5,1,2` → [0.5, 1, 2]; every rate above 0. */
export function parseRates(spec: string): number[] {
  const rates = spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map(Number);
  if (!rates.length || rates.some((r) => !(r > 0) || !Number.isFinite(r)))
    throw new Error(`not a list of rates above 0: "${spec}"`);
  return rates;
}

/** Open-loop arrivals: job i is due at i / rate seconds after the start, for every i with
 * i / rate < duration. Offsets in milliseconds. */
export function schedule(rate: number, durationS: number): number[] {
  if (!(rate > 0) || !(durationS > 0)) return [];
  // The epsilon keeps a float product like 0.3 * 10 = 3.0000000000000004 from adding a job at t = duration.
  const n = Math.ceil(rate * durationS - 1e-9);
  return Array.from({ length: n }, (_, i) => (i * 1000) / rate);
}

/** Nearest-rank percentile (the smallest value with at least p% of the values at or below it);
 * NaN for no values. The same definition as the other service benchmarks. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i]!;
}

export function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN;
}

/** One scheduled job as the harness saw it. Times are milliseconds from the run's start on the
 * client's monotonic clock; created/started come from the job object (the server's clock). */
export interface JobRecord {
  i: number;
  op: string;
  pages: number;
  scheduledMs: number;
  sentMs?: number;
  answeredMs?: number;
  httpStatus?: number;
  id?: string;
  status?: string;
  createdAt?: string;
  startedAt?: string;
  finishedAt?: string;
  /** When the last request that showed the job unfinished was sent. */
  lastActiveMs?: number;
  /** The first poll that saw the job in a final state. */
  seenFinalMs?: number;
  /** GET /jobs/:id/result answered (headers received). */
  resultMs?: number;
  resultBytes?: number;
  /** The job's result is JSON only (OCR blocks): fetched with format=json. */
  jsonResult?: boolean;
  /** "ok" = succeeded and its result answered; anything else carries `code`. */
  outcome?: "ok" | "error" | "skipped" | "unfinished";
  code?: string;
}

export interface OpStats {
  operation: string;
  scheduled: number;
  ok: number;
  errors: Record<string, number>;
  /** Submissions answered 429 (rate_limited or concurrency_limit); never retried. */
  http_429: number;
  pages_completed: number;
  per_page_ms: { p50: number; p95: number; p99: number };
  job_ms: { p50: number; p95: number };
  submit_ms: { p50: number; p95: number };
  queue_wait_ms_mean: number;
  throughput_pages_per_s: number;
}

const r1 = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : n);

/** Statistics of one operation's jobs (or of all jobs with the name "all"): latency from the
 * scheduled submission time (so a client that falls behind its schedule cannot hide latency) to
 * the result answering; per-page = job latency / pages; queue wait = started_at - created_at;
 * throughput = pages completed / (last result - first scheduled submission). */
export function opStats(operation: string, jobs: JobRecord[]): OpStats {
  const ok = jobs.filter((j) => j.outcome === "ok" && j.resultMs !== undefined);
  const jobMs = ok.map((j) => j.resultMs! - j.scheduledMs);
  const perPage = ok.map((j) => (j.resultMs! - j.scheduledMs) / j.pages);
  const waits = ok
    .filter((j) => j.createdAt && j.startedAt)
    .map((j) => Date.parse(j.startedAt!) - Date.parse(j.createdAt!));
  const submit = jobs
    .filter((j) => j.answeredMs !== undefined && j.sentMs !== undefined)
    .map((j) => j.answeredMs! - j.sentMs!);
  const errors: Record<string, number> = {};
  for (const j of jobs) if (j.outcome !== "ok") errors[j.code ?? "unknown"] = (errors[j.code ?? "unknown"] ?? 0) + 1;
  const pages = ok.reduce((a, j) => a + j.pages, 0);
  const first = Math.min(...jobs.map((j) => j.scheduledMs));
  const last = Math.max(...ok.map((j) => j.resultMs!));
  return {
    operation,
    scheduled: jobs.length,
    ok: ok.length,
    errors,
    http_429: jobs.filter((j) => j.httpStatus === 429).length,
    pages_completed: pages,
    per_page_ms: {
      p50: r1(percentile(perPage, 50)),
      p95: r1(percentile(perPage, 95)),
      p99: r1(percentile(perPage, 99)),
    },
    job_ms: { p50: r1(percentile(jobMs, 50)), p95: r1(percentile(jobMs, 95)) },
    submit_ms: { p50: r1(percentile(submit, 50)), p95: r1(percentile(submit, 95)) },
    queue_wait_ms_mean: r1(mean(waits)),
    throughput_pages_per_s: ok.length && last > first ? Math.round((pages / ((last - first) / 1000)) * 100) / 100 : NaN,
  };
}

export interface Knee {
  /** The lowest rate whose p95 per-page latency is at least `factor` × the lowest rate's; null = not reached. */
  rate: number | null;
  baseline_rate: number;
  baseline_p95_ms: number;
  threshold_ms: number;
  note?: string;
}

/** The knee of a sweep, from each rate's p95 per-page latency. A rate where no job completed
 * counts as past the knee (its latency is unbounded); without a baseline there is no knee. */
export function findKnee(points: { rate: number; p95: number }[], factor = 2): Knee {
  const sorted = [...points].sort((a, b) => a.rate - b.rate);
  const base = sorted[0];
  if (!base) return { rate: null, baseline_rate: NaN, baseline_p95_ms: NaN, threshold_ms: NaN, note: "no rates" };
  if (!Number.isFinite(base.p95))
    return {
      rate: null,
      baseline_rate: base.rate,
      baseline_p95_ms: NaN,
      threshold_ms: NaN,
      note: "no job completed at the lowest rate: no baseline",
    };
  const threshold = base.p95 * factor;
  const hit = sorted.slice(1).find((p) => !Number.isFinite(p.p95) || p.p95 >= threshold);
  return { rate: hit ? hit.rate : null, baseline_rate: base.rate, baseline_p95_ms: base.p95, threshold_ms: threshold };
}

// --- Synthetic inputs ---------------------------------------------------------------------

/** Serialises PDF objects (1..n, object 1 the catalog) with a correct xref table; an object is
 * either its dictionary text or a dictionary plus binary stream data. */
function writePdf(objs: (string | { dict: string; data: Uint8Array })[]): Uint8Array {
  const chunks: Buffer[] = [Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "latin1")];
  let len = chunks[0]!.length;
  const offsets: number[] = [];
  const push = (b: Buffer) => {
    chunks.push(b);
    len += b.length;
  };
  objs.forEach((o, i) => {
    offsets.push(len);
    if (typeof o === "string") push(Buffer.from(`${i + 1} 0 obj\n${o}\nendobj\n`, "latin1"));
    else {
      push(
        Buffer.from(`${i + 1} 0 obj\n${o.dict.replace(/>>\s*$/, ` /Length ${o.data.length} >>`)}\nstream\n`, "latin1"),
      );
      push(Buffer.from(o.data));
      push(Buffer.from("\nendstream\nendobj\n", "latin1"));
    }
  });
  const xref = len;
  push(
    Buffer.from(
      `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n` +
        offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join(""),
      "latin1",
    ),
  );
  push(Buffer.from(`trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`, "latin1"));
  return new Uint8Array(Buffer.concat(chunks));
}

const words = (
  "the of and to in a is that for it as was with be by on not he this are or his from at which but have an they you were her " +
  "she there been one all we their has would when if so no what can more will about out up into them some could other time " +
  "these two may then do first any my now such like our over man me even most made after also did many before must through " +
  "back years where much your way well down should because each just those people how too little state good very make world " +
  "still own see men work long get here between both life being under never day same another know while last might us great " +
  "old year off come since against go came right used take three invoice account report figure table section page total amount"
).split(" ");

/** The text lines of page `page` of a run seeded `seed`: 46 lines of about 85 characters of
 * English words (what a dense business page holds), different on every page. */
export function pageLines(seed: number, page: number): string[] {
  const r = prng(seed * 7919 + page);
  const lines: string[] = [];
  for (let l = 0; l < 46; l++) {
    let line = l === 0 ? `Page ${page + 1}.` : "";
    while (line.length < 80) {
      let w = words[Math.floor(r() * words.length)]!;
      if (!line.length || line.endsWith(".")) w = w[0]!.toUpperCase() + w.slice(1);
      line += (line.length ? " " : "") + w + (r() < 0.08 ? "." : r() < 0.05 ? "," : "");
    }
    lines.push(line);
  }
  return lines;
}

/** A born-digital Letter PDF of `pages` text pages (Helvetica 10.5 pt, 14 pt leading). */
export function textPdf(pages: number, seed: number): Uint8Array {
  const kids = Array.from({ length: pages }, (_, i) => `${4 + i * 2} 0 R`).join(" ");
  const objs: string[] = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${pages} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
  ];
  for (let p = 0; p < pages; p++) {
    const body = pageLines(seed, p)
      .map((l) => `(${l.replace(/([\\()])/g, "\\$1")}) '`)
      .join("\n");
    const content = `BT /F1 10.5 Tf 14 TL 72 734 Td\n${body}\nET`;
    objs.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + p * 2} 0 R >>`,
    );
    objs.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }
  return writePdf(objs);
}

/** One page image for imagePdf: `w` × `h` 8-bit grey pixels, rows top to bottom, zlib-deflated
 * (greyImage makes one), so a long input never holds every raw raster at once. */
export interface GreyImage {
  w: number;
  h: number;
  flate: Uint8Array;
}

export function greyImage(px: Uint8Array, w: number, h: number): GreyImage {
  if (px.length !== w * h) throw new Error(`a ${w}x${h} grey image needs ${w * h} bytes, got ${px.length}`);
  return { w, h, flate: deflateSync(px) };
}

/** A Letter PDF with one full-page grey image per page, as a scanner writes. */
export function imagePdf(images: GreyImage[]): Uint8Array {
  const kids = images.map((_, i) => `${3 + i * 3} 0 R`).join(" ");
  const objs: (string | { dict: string; data: Uint8Array })[] = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    `<< /Type /Pages /Kids [${kids}] /Count ${images.length} >>`,
  ];
  images.forEach((im, i) => {
    const page = 3 + i * 3;
    const content = "q 612 0 0 792 0 0 cm /Im0 Do Q";
    objs.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /Im0 ${page + 2} 0 R >> >> /Contents ${page + 1} 0 R >>`,
    );
    objs.push(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    objs.push({
      dict: `<< /Type /XObject /Subtype /Image /Width ${im.w} /Height ${im.h} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode >>`,
      data: im.flate,
    });
  });
  return writePdf(objs);
}
