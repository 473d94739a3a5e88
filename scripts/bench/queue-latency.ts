// Queue benchmark (issue 3, "Done when"): starts the real service (supervisor, API, workers) on
// a fresh database of the test Postgres and measures
//
// 1. latency: with idle workers, the time from the POST /jobs answer to the job being `running`,
//    over LATENCY_JOBS sequential rotate jobs on a 1-page PDF. Reported three ways:
//    - created_to_started_ms: jobs.started_at - jobs.created_at (both the database clock; created_at
//      is the start of the POST /jobs transaction, so this includes committing it);
//    - answer_to_started_ms: jobs.started_at - the moment the client had the 202 (same host clock;
//      can be negative: the NOTIFY fires at commit, before the HTTP answer reaches the client);
//    - answer_to_observed_ms: the 202 until a 1 ms database poll sees status running (an upper bound).
// 2. throughput: THROUGHPUT_JOBS rotate jobs on a 10-page PDF (made with qpdf from a corpus PDF),
//    all queued at once (one INSERT, one NOTIFY) so that every worker is busy; jobs/s from the
//    first start to the last finish, and over the middle 80% of completions (steady state).
//
// Usage: DATABASE_URL=postgres://... bun scripts/bench/queue-latency.ts
// Env: BENCH_WORKERS (default: cores), LATENCY_JOBS (50), THROUGHPUT_JOBS (300), CORPUS_DIR.
// Prints one JSON object.
import { availableParallelism, cpus } from "node:os";
import { join } from "node:path";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { client, corpusDir, startService } from "../../test/support/service";

const workers = Number(process.env.BENCH_WORKERS || availableParallelism());
const latencyJobs = Number(process.env.LATENCY_JOBS || 50);
const throughputJobs = Number(process.env.THROUGHPUT_JOBS || 300);

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  if (!s.length) return NaN;
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return Math.round(s[i]! * 100) / 100;
}

function summary(values: number[]) {
  return { p50: pct(values, 50), p95: pct(values, 95), min: pct(values, 0), max: pct(values, 100), n: values.length };
}

async function uploadFile(baseUrl: string, key: string, path: string, name: string): Promise<any> {
  const form = new FormData();
  form.append("file", new Blob([readFileSync(path)], { type: "application/pdf" }), name);
  const r = await client(baseUrl, key)("POST", "/files", form);
  if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${r.text}`);
  return r.json;
}

const tmp = mkdtempSync(join(tmpdir(), "docproc-bench-"));
const svc = await startService({ workers });
try {
  const { createKey } = await import("../../src/admin/commands");
  const owner = await svc.newKey({ mode: "test" });
  const onePage = await uploadFile(svc.baseUrl, owner.key, join(corpusDir, "files", "pdfa-crazyones.pdf"), "one.pdf");
  // Wait until every worker holds its LISTEN connection (i.e. is idle and ready).
  for (const deadline = Date.now() + 30_000; ; ) {
    const [r] =
      await svc.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'listen%'`;
    if (r!.n >= workers) break;
    if (Date.now() > deadline) throw new Error("workers did not start");
    await Bun.sleep(50);
  }

  // 1. Latency, one job at a time on idle workers (a fresh key every 10 jobs: 30 requests/min each).
  const answerToStarted: number[] = [];
  const answerToObserved: number[] = [];
  const postMs: number[] = [];
  let key = owner.key;
  for (let i = 0; i < latencyJobs; i++) {
    if (i % 10 === 9) key = (await createKey(svc.sql as never, owner.accountId, "test")).key;
    const t0 = Date.now();
    const r = await client(svc.baseUrl, key)("POST", "/jobs", {
      operation: "rotate",
      file_id: onePage.id,
      options: { degrees: 90 },
    });
    const answered = Date.now();
    if (r.status !== 202) throw new Error(`POST /jobs: ${r.status} ${r.text}`);
    postMs.push(answered - t0);
    for (;;) {
      const [row] = await svc.sql`SELECT started_at FROM jobs WHERE id = ${r.json.id}`;
      if (row!.started_at) {
        answerToObserved.push(Date.now() - answered);
        answerToStarted.push((row!.started_at as Date).getTime() - answered);
        break;
      }
      await Bun.sleep(1);
    }
    for (;;) {
      const [row] = await svc.sql`SELECT status FROM jobs WHERE id = ${r.json.id}`;
      if (["succeeded", "failed", "cancelled"].includes(row!.status)) break;
      await Bun.sleep(2);
    }
    await Bun.sleep(20); // let the worker go back to waiting on LISTEN
  }
  // Exact microsecond timestamps from the database for the same jobs.
  const precise =
    await svc.sql`SELECT EXTRACT(EPOCH FROM started_at - created_at) * 1000 AS ms FROM jobs WHERE account_id = ${owner.accountId}`;

  // 2. Throughput with every worker busy.
  const tenPagesPath = join(tmp, "ten.pdf");
  const q = Bun.spawnSync([
    "qpdf",
    join(corpusDir, "files", "geotopo-117-pages.pdf"),
    "--pages",
    join(corpusDir, "files", "geotopo-117-pages.pdf"),
    "1-10",
    "--",
    tenPagesPath,
  ]);
  if (q.exitCode !== 0 && q.exitCode !== 3) throw new Error(`qpdf: ${q.stderr.toString()}`);
  const tenPages = await uploadFile(svc.baseUrl, owner.key, tenPagesPath, "ten.pdf");
  if (tenPages.page_count !== 10) throw new Error(`expected 10 pages, got ${tenPages.page_count}`);
  const t0 = Date.now();
  const ids = (
    await svc.sql`
    INSERT INTO jobs (account_id, key_id, mode, operation, kind, file_ids, options, pages_estimated, credits_per_page, created_at)
    SELECT ${owner.accountId}, ${owner.keyId}, 'test', 'rotate', 'page_ops', ARRAY[${tenPages.id}]::uuid[], '{"degrees":90}', 10, 0, clock_timestamp()
      FROM generate_series(1, ${throughputJobs}) RETURNING id`
  ).map((r) => r.id as string);
  await svc.sql`NOTIFY jobs`;
  for (;;) {
    const [r] =
      await svc.sql`SELECT count(*)::int AS n FROM jobs WHERE id IN ${svc.sql(ids)} AND status IN ('succeeded', 'failed', 'cancelled')`;
    if (r!.n === ids.length) break;
    if (Date.now() - t0 > 600_000) throw new Error("throughput run did not finish in 10 minutes");
    await Bun.sleep(100);
  }
  const wall = (Date.now() - t0) / 1000;
  const rows =
    await svc.sql`SELECT status, started_at, finished_at, worker_id FROM jobs WHERE id IN ${svc.sql(ids)} ORDER BY finished_at`;
  const failed = rows.filter((r) => r.status !== "succeeded").length;
  const firstStart = Math.min(...rows.map((r) => (r.started_at as Date).getTime()));
  const lastFinish = Math.max(...rows.map((r) => (r.finished_at as Date).getTime()));
  const lo = Math.floor(rows.length * 0.1);
  const hi = Math.ceil(rows.length * 0.9) - 1;
  const steadyS = ((rows[hi]!.finished_at as Date).getTime() - (rows[lo]!.finished_at as Date).getTime()) / 1000;
  const perWorker: Record<string, number> = {};
  for (const r of rows) perWorker[r.worker_id] = (perWorker[r.worker_id] ?? 0) + 1;
  const runMs = rows.map((r) => (r.finished_at as Date).getTime() - (r.started_at as Date).getTime());

  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, model: cpus()[0]?.model },
        workers,
        latency: {
          jobs: latencyJobs,
          note: "idle workers, rotate of a 1-page PDF, one job at a time",
          post_jobs_answer_ms: summary(postMs),
          created_to_started_ms: summary(precise.map((r) => Number(r.ms))),
          answer_to_started_ms: summary(answerToStarted),
          answer_to_observed_running_ms: summary(answerToObserved),
        },
        throughput: {
          jobs: throughputJobs,
          note: "rotate 90 of a 10-page PDF, all jobs queued at once, every worker busy",
          failed,
          wall_seconds: Math.round(wall * 100) / 100,
          jobs_per_second: Math.round((rows.length / ((lastFinish - firstStart) / 1000)) * 100) / 100,
          pages_per_second: Math.round(((rows.length * 10) / ((lastFinish - firstStart) / 1000)) * 10) / 10,
          steady_jobs_per_second_middle_80pct: Math.round(((hi - lo) / steadyS) * 100) / 100,
          job_run_ms: summary(runMs),
          jobs_per_worker: Object.values(perWorker).sort((a, b) => b - a),
        },
      },
      null,
      2,
    ),
  );
} finally {
  await svc.stop();
  rmSync(tmp, { recursive: true, force: true });
}
