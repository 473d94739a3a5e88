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
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { call, type KeyState } from "./latency-client";
import {
  defaultMix,
  findKnee,
  mean,
  opStats,
  operationTable,
  parseMix,
  percentile,
  pickEntry,
  prng,
  schedule,
  type JobRecord,
  type MixEntry,
} from "./latency-lib";
import { defaults, type LatencyOptions, log, parseOptions, usage } from "./latency-options";
import { type LatencyReport, renderMarkdown, type RunResult, withoutJobs } from "./latency-report";
import { type Setup, setup, waitForTokens } from "./latency-setup";

// --- One run at one rate ------------------------------------------------------------------------

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
