// Per-page latency of a running deployment under open-loop load, over HTTP only.
//
//   bun scripts/bench/latency.ts --key KEY[,KEY...] [--url http://127.0.0.1:8080/api/v1]
//       (--rate JOBS_PER_S | --sweep 0.5,1,2,4) [--duration 60] [--drain 120]
//       [--mix ocr:1=0.3,rotate:10=0.3,...] [--seed 1] [--poll-ms 100] [--poll list|job]
//       [--max-outstanding 500] [--timeout-ms 30000] [--ocr-dpi 300] [--out FILE] [--quiet]
//
// Job i is submitted at t0 + i/rate whatever happened to earlier jobs (open loop), for
// --duration seconds; then the harness waits up to --drain seconds for the jobs still out.
// Latency runs from the scheduled submission time to the moment GET /jobs/:id/result answers,
// so a client that falls behind its schedule cannot hide latency (the lag is reported too).
// A 429 on POST /jobs is counted and never retried. Inputs (synthetic text PDFs; for OCR the
// same pages rendered to 300 dpi grey images) are uploaded once per (operation, pages) before
// the clock starts. Usage and the reading of the figures: bench/README.md, "Per-page latency".
//
// The service limits every key (sandbox 30 requests/min and 2 active jobs, live 60 and 2), and
// polling spends that budget too, so the harness takes several keys of one account and mode
// (--key a,b,c, repeated --key, --keys-file, or DOCPROC_KEY=a,b,c), keeps a client-side copy
// of each key's token bucket (synchronised from X-RateLimit-Remaining), submits each job with
// the key that has a free job slot and the most tokens, and only polls and downloads with
// tokens beyond those the next submissions need. Polling lists the account's jobs
// (GET /jobs, newest first, paged back to the oldest job still out) instead of one
// GET per job: one request observes up to 100 jobs. `--poll job` polls GET /jobs/:id per job.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { readPgm } from "../../test/support/lang-pages";
import {
  defaultMix,
  findKnee,
  greyImage,
  imagePdf,
  mean,
  opStats,
  operationTable,
  parseMix,
  parseRates,
  percentile,
  pickEntry,
  prng,
  schedule,
  textPdf,
  type GreyImage,
  type JobRecord,
  type Knee,
  type MixEntry,
  type OpStats,
} from "./latency-lib";

export interface LatencyOptions {
  url: string;
  keys: string[];
  rates: number[];
  /** True when the rates came from --sweep (the knee is reported). */
  sweep: boolean;
  durationS: number;
  drainS: number;
  mix: MixEntry[];
  mixSpec: string;
  seed: number;
  pollMs: number;
  poll: "list" | "job";
  maxOutstanding: number;
  timeoutMs: number;
  ocrDpi: number;
  out?: string;
  quiet: boolean;
}

const defaults = {
  url: "http://127.0.0.1:8080/api/v1",
  durationS: 60,
  drainS: 120,
  seed: 1,
  pollMs: 100,
  maxOutstanding: 500,
  timeoutMs: 30_000,
  ocrDpi: 300,
};

const usage = `usage: bun run bench latency --key KEY[,KEY...] (--rate JOBS_PER_S | --sweep R1,R2,...)
  [--url ${defaults.url}] [--duration ${defaults.durationS}] [--drain ${defaults.drainS}]
  [--mix ${defaultMix}]
  [--seed ${defaults.seed}] [--poll-ms ${defaults.pollMs}] [--poll list|job] [--max-outstanding ${defaults.maxOutstanding}]
  [--timeout-ms ${defaults.timeoutMs}] [--ocr-dpi ${defaults.ocrDpi}] [--keys-file FILE] [--out FILE] [--quiet]
keys: --key (repeatable, comma-separated), --keys-file (one per line) or DOCPROC_KEY; all of one account and mode.`;

function num(v: string | undefined, name: string, d: number, min = 0): number {
  if (v === undefined) return d;
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got "${v}"`);
  return n;
}

/** Command line → options; throws with a message on a usage error. */
export function parseOptions(argv: string[], env: Record<string, string | undefined> = process.env): LatencyOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: "string" },
      key: { type: "string", multiple: true },
      "keys-file": { type: "string" },
      rate: { type: "string" },
      sweep: { type: "string" },
      duration: { type: "string" },
      drain: { type: "string" },
      mix: { type: "string" },
      seed: { type: "string" },
      "poll-ms": { type: "string" },
      poll: { type: "string" },
      "max-outstanding": { type: "string" },
      "timeout-ms": { type: "string" },
      "ocr-dpi": { type: "string" },
      out: { type: "string" },
      quiet: { type: "boolean" },
      help: { type: "boolean" },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) throw new Error(usage);
  const split = (s: string) =>
    s
      .split(/[\s,]+/)
      .map((k) => k.trim())
      .filter(Boolean);
  let keys = (values.key ?? []).flatMap(split);
  if (values["keys-file"]) keys.push(...split(readFileSync(values["keys-file"], "utf8")));
  if (!keys.length && env.DOCPROC_KEY) keys = split(env.DOCPROC_KEY);
  if (!keys.length) throw new Error(`--key is required (or DOCPROC_KEY)\n${usage}`);
  keys = [...new Set(keys)];
  if (values.rate && values.sweep) throw new Error("give --rate or --sweep, not both");
  if (!values.rate && !values.sweep) throw new Error(`--rate or --sweep is required\n${usage}`);
  const rates = parseRates(values.sweep ?? values.rate!);
  const url = (values.url ?? env.DOCPROC_URL ?? defaults.url).replace(/\/+$/, "");
  if (!/^https?:\/\/[^/]+/.test(url)) throw new Error(`--url must be an http(s) URL, got "${url}"`);
  const poll = values.poll ?? "list";
  if (poll !== "list" && poll !== "job") throw new Error('--poll must be "list" or "job"');
  const mixSpec = values.mix ?? defaultMix;
  const durationS = num(values.duration, "duration", defaults.durationS, 0.001);
  return {
    url,
    keys,
    rates,
    sweep: !!values.sweep,
    durationS,
    drainS: num(values.drain, "drain", defaults.drainS),
    mix: parseMix(mixSpec),
    mixSpec,
    seed: Math.trunc(num(values.seed, "seed", defaults.seed)),
    pollMs: num(values["poll-ms"], "poll-ms", defaults.pollMs, 1),
    poll,
    maxOutstanding: Math.trunc(num(values["max-outstanding"], "max-outstanding", defaults.maxOutstanding, 1)),
    timeoutMs: num(values["timeout-ms"], "timeout-ms", defaults.timeoutMs, 1),
    ocrDpi: num(values["ocr-dpi"], "ocr-dpi", defaults.ocrDpi, 50),
    out: values.out,
    quiet: !!values.quiet,
  };
}

// --- HTTP and the keys' request budget ---------------------------------------------------------

/** A key and the harness's copy of its token bucket (capacity = requests per minute, refilled
 * continuously), kept at or below what the service last reported, and its active jobs. */
class KeyState {
  tokens: number;
  at = performance.now();
  active = 0;
  /** Requests sent with this key and not answered yet. */
  inflight = 0;
  constructor(
    readonly key: string,
    readonly cap: number,
    readonly maxActive: number,
  ) {
    this.tokens = cap;
  }
  level(): number {
    const now = performance.now();
    this.tokens = Math.min(this.cap, this.tokens + ((now - this.at) / 1000) * (this.cap / 60));
    this.at = now;
    return this.tokens;
  }
  take(): void {
    this.level();
    this.tokens -= 1;
  }
  /** Re-anchors the copy on the service's count (whole tokens left after this request) minus the
   * other requests still in flight, which the service may not have counted yet. A refused request
   * takes no token on the service, so the copy must not keep the one taken for it. */
  sync(h: Headers): void {
    const remaining = Number(h.get("x-ratelimit-remaining"));
    if (!h.has("x-ratelimit-remaining") || !Number.isFinite(remaining)) return;
    this.level();
    this.tokens = remaining - Math.max(0, this.inflight - 1);
  }
}

class KeyPool {
  /** Tokens each key keeps for submissions; polls and downloads only spend above it. */
  reserve = 1;
  constructor(readonly keys: KeyState[]) {}
  private best(list: KeyState[]): KeyState | undefined {
    let out: KeyState | undefined;
    for (const k of list) if (!out || k.level() > out.level()) out = k;
    return out;
  }
  /** The key with a free job slot and the most tokens; when every slot is taken, the key with the
   * most tokens (the service then answers 429 concurrency_limit, which is what is measured). */
  forSubmit(): KeyState {
    return this.best(this.keys.filter((k) => k.active < k.maxActive)) ?? this.best(this.keys)!;
  }
  /** A key that can spend a token on background work and still hold `reserve + extra - 1`. */
  background(extra: number): KeyState | null {
    const k = this.best(this.keys);
    return k && k.level() >= this.reserve + extra ? k : null;
  }
  full(): boolean {
    return this.keys.every((k) => k.level() >= k.cap - 0.5);
  }
}

interface Answer {
  status: number;
  json: any;
  code?: string;
  bytes: number;
  /** performance.now() when the status and headers arrived. */
  headersAt: number;
}

async function call(
  base: string,
  key: KeyState,
  method: string,
  path: string,
  opts: { json?: unknown; form?: FormData; timeoutMs: number; idempotencyKey?: string; accept?: string },
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${key.key}` };
  if (opts.json !== undefined) headers["content-type"] = "application/json";
  if (opts.idempotencyKey) headers["idempotency-key"] = opts.idempotencyKey;
  if (opts.accept) headers.accept = opts.accept;
  key.inflight++;
  try {
    // Never follows a redirect: the harness only talks to the URL it was given.
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined),
      redirect: "manual",
      signal: AbortSignal.timeout(opts.timeoutMs),
    });
    const headersAt = performance.now();
    const buf = new Uint8Array(await res.arrayBuffer());
    let json: any = null;
    if ((res.headers.get("content-type") ?? "").includes("json")) {
      try {
        json = JSON.parse(new TextDecoder().decode(buf));
      } catch {
        json = null;
      }
    }
    const code = res.status >= 400 ? (json?.error?.code ?? `http_${res.status}`) : undefined;
    key.sync(res.headers);
    return { status: res.status, json, code, bytes: buf.length, headersAt };
  } catch (e) {
    const name = (e as Error).name;
    return {
      status: 0,
      json: null,
      code: name === "TimeoutError" || name === "AbortError" ? "timeout" : "network_error",
      bytes: 0,
      headersAt: performance.now(),
    };
  } finally {
    key.inflight--;
  }
}

// --- Inputs -------------------------------------------------------------------------------------

/** The same text pages rendered to grey images at `dpi` with pdftoppm (poppler-utils). */
function renderImagePdf(pages: number, seed: number, dpi: number): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), "docproc-latency-"));
  try {
    const src = join(dir, "text.pdf");
    writeFileSync(src, textPdf(pages, seed));
    const images: GreyImage[] = [];
    for (let p = 1; p <= pages; p++) {
      const stem = join(dir, `p${p}`);
      const r = spawnSync(
        "pdftoppm",
        ["-r", String(dpi), "-gray", "-f", String(p), "-l", String(p), "-singlefile", src, stem],
        { encoding: "utf8", timeout: 120_000 },
      );
      if (r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT")
        throw new Error("OCR inputs are rendered with pdftoppm (Debian: poppler-utils), which is not on PATH");
      if (r.status !== 0) throw new Error(`pdftoppm failed (${r.status}): ${r.stderr}`);
      const { px, w, h } = readPgm(`${stem}.pgm`);
      images.push(greyImage(px, w, h));
      rmSync(`${stem}.pgm`);
    }
    return imagePdf(images);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function log(opts: { quiet: boolean }, msg: string): void {
  if (!opts.quiet) console.error(`latency: ${msg}`);
}

interface Setup {
  pool: KeyPool;
  account: { id: string; mode: string; limits: Record<string, unknown> };
  /** `${op}:${pages}` → file id. */
  files: Map<string, string>;
}

async function waitForTokens(opts: LatencyOptions, pool: KeyPool, maxS: number): Promise<void> {
  if (pool.full()) return;
  log(opts, `waiting (at most ${maxS} s) for the keys' rate-limit buckets to refill`);
  const deadline = performance.now() + maxS * 1000;
  while (!pool.full() && performance.now() < deadline) await Bun.sleep(250);
}

async function setup(opts: LatencyOptions): Promise<Setup> {
  // Every key: which account and mode it acts in, and its limits.
  const accounts = await Promise.all(
    opts.keys.map(async (k, i) => {
      const a = await call(opts.url, new KeyState(k, 1, 1), "GET", "/account", { timeoutMs: opts.timeoutMs });
      if (a.status !== 200)
        throw new Error(`GET ${opts.url}/account with key #${i + 1} answered ${a.status} ${a.code ?? ""}`.trim());
      return a.json;
    }),
  );
  const first = accounts[0]!;
  const mixed = accounts.find((a) => a.id !== first.id || a.key?.mode !== first.key?.mode);
  if (mixed)
    throw new Error(
      "every key must belong to the same account and mode (the harness polls that account's job list and uploads the inputs once)",
    );
  const limits = first.limits ?? {};
  const rpm = Number(limits.requests_per_minute) || 60;
  const maxActive = Number(limits.concurrent_jobs) || 1_000_000;
  const pool = new KeyPool(opts.keys.map((k) => new KeyState(k, rpm, maxActive)));
  // GET /account above took one token from every key.
  for (const k of pool.keys) k.take();
  const maxPages = Number(limits.pages_per_job) || Infinity;
  const tooLong = opts.mix.find((e) => e.pages > maxPages);
  if (tooLong)
    throw new Error(`--mix asks for ${tooLong.pages} pages; this key's mode allows ${maxPages} pages per job`);

  const files = new Map<string, string>();
  for (const e of opts.mix) {
    const kind = operationTable[e.op]!.input;
    const seed = opts.seed * 1000 + e.pages;
    const bytes = kind === "image" ? renderImagePdf(e.pages, seed, opts.ocrDpi) : textPdf(e.pages, seed);
    const name = `latency-${kind}-${e.pages}p.pdf`;
    for (let attempt = 0; ; attempt++) {
      const key = pool.background(0) ?? pool.forSubmit();
      key.take();
      const form = new FormData();
      form.append("file", new Blob([bytes], { type: "application/pdf" }), name);
      const a = await call(opts.url, key, "POST", "/files", { form, timeoutMs: Math.max(opts.timeoutMs, 300_000) });
      if (a.status === 201) {
        if (a.json.page_count !== e.pages)
          throw new Error(`${name}: the service counted ${a.json.page_count} pages, expected ${e.pages}`);
        files.set(`${e.op}:${e.pages}`, a.json.id);
        log(opts, `uploaded ${name} (${(bytes.length / 1024).toFixed(0)} KiB) for ${e.op}:${e.pages}`);
        break;
      }
      if (a.status === 429 && attempt < 10) {
        await Bun.sleep(2000);
        continue;
      }
      throw new Error(`uploading ${name} answered ${a.status} ${a.code ?? ""}`.trim());
    }
  }
  return { pool, account: { id: first.id, mode: first.key?.mode, limits }, files };
}

// --- One run at one rate ------------------------------------------------------------------------

export interface RunResult {
  rate: number;
  duration_s: number;
  scheduled: number;
  submitted: number;
  accepted: number;
  ok: number;
  skipped_max_outstanding: number;
  unfinished: number;
  /** Jobs still out after the drain that a POST /cancel found cancelled by it. */
  cancelled_at_end: number;
  /** Jobs still out after the drain that had in fact finished, unseen for want of poll budget. */
  finished_unseen: number;
  schedule: { lag_ms: { p50: number; p95: number; max: number }; late_over_10ms: number };
  poll: {
    mode: string;
    requested_ms: number;
    /** Between the starts of consecutive polls while jobs were out. */
    achieved_ms: { p50: number; p95: number; mean: number };
    /** One poll request's own time (a job's end is seen up to interval + this late). */
    request_ms: { p50: number; p95: number };
    /** Per job, from sending the last request that showed it unfinished to the answer of the
     * first that showed it finished: the interval its end is known to lie in. */
    completion_window_ms: { p50: number; p95: number };
    polls: number;
    requests: number;
    skipped_no_budget: number;
    errors: Record<string, number>;
  };
  /** From the poll that saw a job succeed to its result answering (budget waits included). */
  result_fetch_ms: { mean: number; p95: number };
  drain_s: number;
  operations: OpStats[];
  all: OpStats;
  jobs?: JobRecord[];
}

const r1 = (n: number) => (Number.isFinite(n) ? Math.round(n * 10) / 10 : n);
const isFinal = (s: string) => s === "succeeded" || s === "failed" || s === "cancelled";

async function runAt(opts: LatencyOptions, s: Setup, rate: number): Promise<RunResult> {
  const { pool } = s;
  pool.reserve = 1 + Math.ceil(rate / pool.keys.length);
  const rnd = prng(opts.seed);
  const records: JobRecord[] = schedule(rate, opts.durationS).map((ms, i) => {
    const e = pickEntry(opts.mix, rnd());
    return { i, op: e.op, pages: e.pages, scheduledMs: ms };
  });
  const keyOf = new Map<JobRecord, KeyState>();
  const tracked = new Map<string, JobRecord>();
  const resultQueue: JobRecord[] = [];
  const lags: number[] = [];
  const pollIntervals: number[] = [];
  const pollErrors: Record<string, number> = {};
  const fetchDelays: number[] = [];
  const pollRequestMs: number[] = [];
  const windows: number[] = [];
  let polls = 0;
  let pollRequests = 0;
  let skippedNoBudget = 0;
  let inflightSubmits = 0;
  let inflightResults = 0;
  let closed = false;
  let stop = false;
  const t0 = performance.now();
  const now = () => performance.now() - t0;
  const outstanding = () => inflightSubmits + tracked.size + resultQueue.length + inflightResults;

  const finish = (rec: JobRecord, outcome: JobRecord["outcome"], code?: string) => {
    if (closed || rec.outcome) return;
    rec.outcome = outcome;
    if (code) rec.code = code;
  };

  /** `j` is the job as answered by a request sent at `sentMs` (run clock). */
  const observe = (rec: JobRecord, j: any, sentMs: number) => {
    if (closed || rec.seenFinalMs !== undefined) return;
    rec.status = j.status;
    rec.createdAt = j.created_at ?? rec.createdAt;
    rec.startedAt = j.started_at ?? rec.startedAt;
    rec.finishedAt = j.finished_at ?? rec.finishedAt;
    if (!isFinal(j.status)) {
      rec.lastActiveMs = Math.max(rec.lastActiveMs ?? 0, sentMs);
      return;
    }
    tracked.delete(rec.id!);
    keyOf.get(rec)!.active--;
    rec.seenFinalMs = now();
    windows.push(rec.seenFinalMs - (rec.lastActiveMs ?? rec.sentMs ?? 0));
    if (j.status === "succeeded") {
      rec.jsonResult = j.result?.type === "json";
      resultQueue.push(rec);
    } else finish(rec, "error", j.status === "failed" ? (j.error?.code ?? "failed") : "cancelled");
  };

  const submit = async (rec: JobRecord) => {
    const key = pool.forSubmit();
    key.take();
    key.active++;
    keyOf.set(rec, key);
    inflightSubmits++;
    rec.sentMs = now();
    const a = await call(opts.url, key, "POST", "/jobs", {
      json: operationTable[rec.op]!.job(s.files.get(`${rec.op}:${rec.pages}`)!),
      idempotencyKey: crypto.randomUUID(),
      timeoutMs: opts.timeoutMs,
    });
    inflightSubmits--;
    if (closed) return;
    rec.answeredMs = a.headersAt - t0;
    rec.httpStatus = a.status;
    if (a.status === 202 && a.json?.id) {
      rec.id = a.json.id;
      rec.status = a.json.status;
      rec.createdAt = a.json.created_at;
      tracked.set(rec.id!, rec);
      observe(rec, a.json, rec.sentMs);
    } else {
      key.active--;
      finish(rec, "error", a.code ?? `http_${a.status}`);
    }
  };

  const fetchResult = async (rec: JobRecord, key: KeyState) => {
    inflightResults++;
    const a = await call(opts.url, key, "GET", `/jobs/${rec.id}/result${rec.jsonResult ? "?format=json" : ""}`, {
      timeoutMs: opts.timeoutMs,
    });
    inflightResults--;
    if (closed) return;
    if (a.status >= 200 && a.status < 400) {
      rec.resultMs = a.headersAt - t0;
      rec.resultBytes = a.bytes;
      fetchDelays.push(rec.resultMs - rec.seenFinalMs!);
      finish(rec, "ok");
    } else if (a.status === 429 && a.code === "rate_limited") {
      // The harness's own budget estimate was off: not the job's failure, fetch again.
      pollErrors.result_rate_limited = (pollErrors.result_rate_limited ?? 0) + 1;
      resultQueue.unshift(rec);
    } else finish(rec, "error", `result_${a.code ?? a.status}`);
  };

  const pollList = async (): Promise<boolean> => {
    let oldest = Infinity;
    let oldestSent = Infinity;
    for (const r of tracked.values()) {
      oldest = Math.min(oldest, Date.parse(r.createdAt ?? "") || -Infinity);
      oldestSent = Math.min(oldestSent, r.sentMs ?? 0);
    }
    // A page as long as the harness's own jobs since the oldest one out (plus a few made by
    // anyone else), so that polling loads the service under test no more than it must.
    const window = records.filter((r) => r.httpStatus === 202 && (r.sentMs ?? 0) >= oldestSent).length;
    const limit = Math.min(100, window + 5);
    let after: string | undefined;
    let did = false;
    for (let page = 0; page < 50; page++) {
      const key = pool.background(2);
      if (!key) return did;
      key.take();
      pollRequests++;
      const sent = performance.now();
      const sentMs = sent - t0;
      const a = await call(opts.url, key, "GET", `/jobs?limit=${limit}${after ? `&starting_after=${after}` : ""}`, {
        timeoutMs: opts.timeoutMs,
      });
      pollRequestMs.push(a.headersAt - sent);
      if (a.status !== 200 || !Array.isArray(a.json?.data)) {
        pollErrors[a.code ?? `http_${a.status}`] = (pollErrors[a.code ?? `http_${a.status}`] ?? 0) + 1;
        return did;
      }
      did = true;
      const data = a.json.data as any[];
      for (const j of data) {
        const rec = tracked.get(j.id);
        if (rec) observe(rec, j, sentMs);
      }
      const last = data[data.length - 1];
      if (!a.json.has_more || !last || Date.parse(last.created_at) < oldest) break;
      after = last.id;
    }
    return did;
  };

  const lastPolled = new Map<string, number>();
  const pollJobs = async (): Promise<boolean> => {
    const due = [...tracked.values()].sort((x, y) => (lastPolled.get(x.id!) ?? 0) - (lastPolled.get(y.id!) ?? 0));
    const batch: Promise<void>[] = [];
    for (const rec of due.slice(0, 50)) {
      const key = pool.background(2);
      if (!key) break;
      key.take();
      pollRequests++;
      lastPolled.set(rec.id!, now());
      const sent = performance.now();
      batch.push(
        call(opts.url, key, "GET", `/jobs/${rec.id}`, { timeoutMs: opts.timeoutMs }).then((a) => {
          pollRequestMs.push(a.headersAt - sent);
          if (a.status === 200) observe(rec, a.json, sent - t0);
          else pollErrors[a.code ?? `http_${a.status}`] = (pollErrors[a.code ?? `http_${a.status}`] ?? 0) + 1;
        }),
      );
    }
    await Promise.all(batch);
    return batch.length > 0;
  };

  const poller = (async () => {
    let last: number | undefined;
    while (!stop) {
      const tick = performance.now();
      if (tracked.size) {
        const did = await (opts.poll === "list" ? pollList() : pollJobs());
        if (did) {
          polls++;
          if (last !== undefined) pollIntervals.push(tick - last);
          last = tick;
        } else skippedNoBudget++;
      } else last = undefined;
      await Bun.sleep(Math.max(1, opts.pollMs - (performance.now() - tick)));
    }
  })();

  const fetcher = (async () => {
    while (!stop) {
      while (resultQueue.length) {
        const key = pool.background(1);
        if (!key) break;
        key.take();
        void fetchResult(resultQueue.shift()!, key);
      }
      await Bun.sleep(5);
    }
  })();

  const progress = setInterval(() => {
    const done = records.filter((r) => r.outcome).length;
    log(
      opts,
      `rate ${rate}/s t=${(now() / 1000).toFixed(0)} s: ${records.filter((r) => r.sentMs !== undefined).length}/${records.length} sent, ${done} done, ${outstanding()} out, ${records.filter((r) => r.httpStatus === 429).length} x 429`,
    );
  }, 5000);

  // Open-loop arrivals.
  for (const rec of records) {
    const wait = t0 + rec.scheduledMs - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    lags.push(Math.max(0, now() - rec.scheduledMs));
    if (outstanding() >= opts.maxOutstanding) {
      finish(rec, "skipped", "max_outstanding");
      continue;
    }
    void submit(rec);
  }

  // Drain, bounded; no submission is left to keep tokens for.
  pool.reserve = 0;
  const drainStart = performance.now();
  while (outstanding() && performance.now() - drainStart < opts.drainS * 1000) await Bun.sleep(20);
  const drainS = (performance.now() - drainStart) / 1000;
  stop = true;
  await Promise.all([poller, fetcher]);
  closed = true;
  clearInterval(progress);
  for (const rec of records)
    if (!rec.outcome) {
      rec.outcome = "unfinished";
      rec.code = "drain_timeout";
    }

  // Jobs still queued or running would load the next rate: cancel them (best effort, bounded).
  // The answer also tells which of them had in fact finished unseen (polls lacked budget).
  const leftover = [...tracked.values()];
  let cancelled = 0;
  let finishedUnseen = 0;
  if (leftover.length) {
    const deadline = performance.now() + 10_000;
    for (const rec of leftover) {
      if (performance.now() > deadline) break;
      const key = pool.background(0) ?? pool.forSubmit();
      key.take();
      const a = await call(opts.url, key, "POST", `/jobs/${rec.id}/cancel`, { timeoutMs: 5000 });
      if (a.status !== 200) continue;
      if (a.json?.status === "cancelled") cancelled++;
      else if (isFinal(a.json?.status ?? "")) {
        finishedUnseen++;
        rec.code = "finished_unseen";
      }
    }
    log(
      opts,
      `after the drain: ${cancelled} of ${leftover.length} jobs still out cancelled, ${finishedUnseen} had finished unseen`,
    );
  }
  for (const k of pool.keys) k.active = 0;

  const ops = [...new Set(opts.mix.map((e) => e.op))];
  return {
    rate,
    duration_s: opts.durationS,
    scheduled: records.length,
    submitted: records.filter((r) => r.sentMs !== undefined).length,
    accepted: records.filter((r) => r.httpStatus === 202).length,
    ok: records.filter((r) => r.outcome === "ok").length,
    skipped_max_outstanding: records.filter((r) => r.code === "max_outstanding").length,
    unfinished: records.filter((r) => r.outcome === "unfinished").length,
    cancelled_at_end: cancelled,
    finished_unseen: finishedUnseen,
    schedule: {
      lag_ms: { p50: r1(percentile(lags, 50)), p95: r1(percentile(lags, 95)), max: r1(Math.max(0, ...lags)) },
      late_over_10ms: lags.filter((l) => l > 10).length,
    },
    poll: {
      mode: opts.poll,
      requested_ms: opts.pollMs,
      achieved_ms: {
        p50: r1(percentile(pollIntervals, 50)),
        p95: r1(percentile(pollIntervals, 95)),
        mean: r1(mean(pollIntervals)),
      },
      request_ms: { p50: r1(percentile(pollRequestMs, 50)), p95: r1(percentile(pollRequestMs, 95)) },
      completion_window_ms: { p50: r1(percentile(windows, 50)), p95: r1(percentile(windows, 95)) },
      polls,
      requests: pollRequests,
      skipped_no_budget: skippedNoBudget,
      errors: pollErrors,
    },
    result_fetch_ms: { mean: r1(mean(fetchDelays)), p95: r1(percentile(fetchDelays, 95)) },
    drain_s: r1(drainS),
    operations: ops.map((op) =>
      opStats(
        op,
        records.filter((r) => r.op === op),
      ),
    ),
    all: opStats("all", records),
    jobs: records,
  };
}

// --- The whole run and its report -----------------------------------------------------------------

export interface LatencyReport {
  harness: "latency";
  url: string;
  at: string;
  keys: number;
  mode: string;
  limits: Record<string, unknown>;
  mix: MixEntry[];
  seed: number;
  duration_s: number;
  drain_s: number;
  poll: { mode: string; requested_ms: number };
  runs: RunResult[];
  /** Over all jobs pooled (the slowest operation's pages dominate the p95). */
  knee: Knee | null;
  /** The same rule per operation. */
  knee_by_operation: Record<string, Knee> | null;
  notes: string[];
}

export async function runLatency(opts: LatencyOptions): Promise<LatencyReport> {
  log(
    opts,
    `target ${opts.url}, ${opts.keys.length} key(s), rates ${opts.rates.join(", ")} jobs/s x ${opts.durationS} s`,
  );
  const s = await setup(opts);
  const rpm = s.pool.keys[0]!.cap;
  const budget = (s.pool.keys.length * rpm) / 60;
  const notes: string[] = [
    `Open loop: job i is due at i/rate s; latency runs from that due time to GET /jobs/:id/result answering (headers), so schedule lag counts as latency.`,
    `Completion is seen by polling (${opts.poll === "list" ? "GET /jobs newest first, paged back to the oldest job out" : "GET /jobs/:id per job"}) every ${opts.pollMs} ms at best: a job's latency is over-stated by up to its completion window (poll.completion_window_ms: from the last request that showed it unfinished to the first that showed it finished) plus the result fetch.`,
    `Request budget: ${s.pool.keys.length} key(s) x ${rpm}/min = ${budget.toFixed(1)} requests/s for submissions, polls and result downloads; ${s.pool.keys.length * s.pool.keys[0]!.maxActive} jobs can be active at once (${s.pool.keys[0]!.maxActive} per key). 429s on POST /jobs are counted, never retried.`,
    `Queue wait = started_at - created_at of the job object (the service's clock).`,
  ];
  for (const rate of opts.rates) {
    const need = rate * 2;
    if (need > budget * 0.9) {
      const msg = `at ${rate} jobs/s submissions and result downloads alone need about ${need.toFixed(1)} requests/s, more than the keys allow (${budget.toFixed(1)}/s): expect 429 rate_limited; give more keys (--key a,b,c or --keys-file)`;
      log(opts, `warning: ${msg}`);
      notes.push(msg);
    }
  }
  const runs: RunResult[] = [];
  for (const rate of opts.rates) {
    await waitForTokens(opts, s.pool, 60);
    log(opts, `running ${rate} jobs/s for ${opts.durationS} s`);
    runs.push(await runAt(opts, s, rate));
  }
  const knee = opts.sweep ? findKnee(runs.map((r) => ({ rate: r.rate, p95: r.all.per_page_ms.p95 }))) : null;
  const ops = [...new Set(opts.mix.map((e) => e.op))];
  const kneeByOp = opts.sweep
    ? Object.fromEntries(
        ops.map((op) => [
          op,
          findKnee(
            runs.map((r) => ({
              rate: r.rate,
              p95: r.operations.find((o) => o.operation === op)?.per_page_ms.p95 ?? NaN,
            })),
          ),
        ]),
      )
    : null;
  return {
    harness: "latency",
    url: opts.url,
    at: new Date().toISOString(),
    keys: opts.keys.length,
    mode: s.account.mode,
    limits: s.account.limits,
    mix: opts.mix,
    seed: opts.seed,
    duration_s: opts.durationS,
    drain_s: opts.drainS,
    poll: { mode: opts.poll, requested_ms: opts.pollMs },
    runs,
    knee,
    knee_by_operation: kneeByOp,
    notes,
  };
}

const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "-");

/** The report as Markdown: one table per rate, the sweep with its knee, the notes. */
export function renderMarkdown(rep: LatencyReport): string {
  const out: string[] = [];
  const mixText = rep.mix.map((e) => `${e.op}:${e.pages}=${Math.round(e.weight * 1000) / 1000}`).join(", ");
  out.push(
    `Target ${rep.url} (${rep.mode} mode, ${rep.keys} key(s)); mix ${mixText}; seed ${rep.seed}; ${rep.duration_s} s per rate, drain at most ${rep.drain_s} s.`,
  );
  for (const r of rep.runs) {
    out.push(
      "",
      `### ${r.rate} jobs/s`,
      "",
      `${r.scheduled} scheduled, ${r.submitted} sent, ${r.accepted} accepted, ${r.ok} completed; ${r.skipped_max_outstanding} skipped at --max-outstanding, ${r.unfinished} unfinished after the drain (${r.cancelled_at_end} cancelled then, ${r.finished_unseen} had finished unseen). ` +
        `Schedule lag p50/p95/max ${f(r.schedule.lag_ms.p50, 1)}/${f(r.schedule.lag_ms.p95, 1)}/${f(r.schedule.lag_ms.max, 1)} ms (${r.schedule.late_over_10ms} sends over 10 ms late). ` +
        `Polls every ${f(r.poll.achieved_ms.p50)} ms p50, ${f(r.poll.achieved_ms.p95)} ms p95 (asked ${r.poll.requested_ms}; ${r.poll.skipped_no_budget} polls skipped for want of request budget), one poll request p50 ${f(r.poll.request_ms.p50)} ms; a job's end is known within ${f(r.poll.completion_window_ms.p50)} ms p50, ${f(r.poll.completion_window_ms.p95)} ms p95; result fetched mean ${f(r.result_fetch_ms.mean)} ms after the poll that saw the job succeed.`,
      "",
      "| operation | jobs | ok | 429 | errors | per page p50 / p95 / p99 (ms) | job p50 / p95 (ms) | POST p50 (ms) | queue wait mean (ms) | pages/s |",
      "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    );
    for (const o of [...r.operations, r.all]) {
      const errs =
        Object.entries(o.errors)
          .map(([c, n]) => `${c} ${n}`)
          .join(", ") || "0";
      out.push(
        `| ${o.operation === "all" ? "**all**" : o.operation} | ${o.scheduled} | ${o.ok} | ${o.http_429} | ${errs} | ${f(o.per_page_ms.p50)} / ${f(o.per_page_ms.p95)} / ${f(o.per_page_ms.p99)} | ${f(o.job_ms.p50)} / ${f(o.job_ms.p95)} | ${f(o.submit_ms.p50, 1)} | ${f(o.queue_wait_ms_mean)} | ${f(o.throughput_pages_per_s, 2)} |`,
      );
    }
  }
  if (rep.knee) {
    const ops = Object.keys(rep.knee_by_operation ?? {});
    out.push(
      "",
      "### Sweep",
      "",
      `| rate (jobs/s) | completed / scheduled | 429 | per page p95, all (ms) | ${ops.map((o) => `${o} p95 (ms)`).join(" | ")} | pages/s |`,
      `|---:|---:|---:|---:|${ops.map(() => "---:|").join("")}---:|`,
    );
    for (const r of [...rep.runs].sort((a, b) => a.rate - b.rate)) {
      const per = ops.map((o) => f(r.operations.find((x) => x.operation === o)?.per_page_ms.p95 ?? NaN));
      out.push(
        `| ${r.rate} | ${r.ok} / ${r.scheduled} | ${r.all.http_429} | ${f(r.all.per_page_ms.p95)} | ${per.join(" | ")} | ${f(r.all.throughput_pages_per_s, 2)} |`,
      );
    }
    const say = (k: Knee) =>
      k.rate !== null
        ? `**${k.rate} jobs/s** (p95 per page at ${k.baseline_rate} jobs/s: ${f(k.baseline_p95_ms)} ms; threshold ${f(k.threshold_ms)} ms)`
        : `not reached${k.note ? ` (${k.note})` : ` (p95 per page at ${k.baseline_rate} jobs/s: ${f(k.baseline_p95_ms)} ms; threshold ${f(k.threshold_ms)} ms)`}`;
    out.push(
      "",
      `Knee (the lowest rate whose p95 per-page latency is at least twice the lowest rate's), all jobs pooled: ${say(rep.knee)}.`,
      "",
      `By operation: ${Object.entries(rep.knee_by_operation ?? {})
        .map(([o, k]) => `${o} ${say(k)}`)
        .join("; ")}.`,
    );
  }
  out.push("", ...rep.notes.map((n) => `- ${n}`));
  return out.join("\n");
}

function withoutJobs(rep: LatencyReport): LatencyReport {
  return { ...rep, runs: rep.runs.map(({ jobs: _jobs, ...r }) => r) };
}

/** For the bench runner: the options (defaults as on the command line; the keys from DOCPROC_KEY
 * when not given) → a report section. */
export async function latencySuite(
  opts: Partial<Omit<LatencyOptions, "mix">> & { mix?: string | MixEntry[] } = {},
): Promise<{ title: string; markdown: string; json: unknown }> {
  const keys = opts.keys?.length
    ? opts.keys
    : (process.env.DOCPROC_KEY ?? "")
        .split(",")
        .map((k) => k.trim())
        .filter(Boolean);
  if (!keys.length) throw new Error("latency: no key (give keys or set DOCPROC_KEY)");
  const mixSpec = typeof opts.mix === "string" ? opts.mix : defaultMix;
  const full: LatencyOptions = {
    url: (opts.url ?? process.env.DOCPROC_URL ?? defaults.url).replace(/\/+$/, ""),
    keys,
    rates: opts.rates ?? [1],
    sweep: opts.sweep ?? (opts.rates?.length ?? 1) > 1,
    durationS: opts.durationS ?? defaults.durationS,
    drainS: opts.drainS ?? defaults.drainS,
    mix: Array.isArray(opts.mix) ? opts.mix : parseMix(mixSpec),
    mixSpec,
    seed: opts.seed ?? defaults.seed,
    pollMs: opts.pollMs ?? defaults.pollMs,
    poll: opts.poll ?? "list",
    maxOutstanding: opts.maxOutstanding ?? defaults.maxOutstanding,
    timeoutMs: opts.timeoutMs ?? defaults.timeoutMs,
    ocrDpi: opts.ocrDpi ?? defaults.ocrDpi,
    quiet: opts.quiet ?? false,
  };
  const rep = await runLatency(full);
  return {
    title: "Per-page latency under open-loop load (HTTP)",
    markdown: renderMarkdown(rep),
    json: withoutJobs(rep),
  };
}

/** The command line; returns the exit code (2 usage, 1 when no job completed at any rate).
 * Without `--out`, `record` (the bench runner's) puts the section into bench/report.json. */
export async function main(
  argv: string[],
  record?: (section: { title: string; markdown: string; json: unknown }) => void,
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(usage);
    return 0;
  }
  let opts: LatencyOptions;
  try {
    opts = parseOptions(argv);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  let rep: LatencyReport;
  try {
    rep = await runLatency(opts);
  } catch (e) {
    console.error(`latency: ${(e as Error).message}`);
    return 1;
  }
  console.log(renderMarkdown(rep));
  if (opts.out) {
    const file = resolve(opts.out);
    mkdirSync(dirname(file), { recursive: true });
    // The file keeps every job's timeline; the runner's section leaves them out.
    writeFileSync(file, JSON.stringify(rep, null, 2) + "\n");
    log(opts, `wrote ${file}`);
  } else if (record && rep.runs.some((r) => r.ok > 0)) {
    record({
      title: "Per-page latency under open-loop load (HTTP)",
      markdown: renderMarkdown(rep),
      json: withoutJobs(rep),
    });
  }
  if (!rep.runs.some((r) => r.ok > 0)) {
    console.error("latency: no job completed at any rate");
    return 1;
  }
  return 0;
}

if (import.meta.main) process.exit(await main(Bun.argv.slice(2)));
