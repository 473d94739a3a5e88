// GET /metrics: the operators' view in Prometheus text format. Job and webhook figures are read
// from Postgres (the queue), so every API node reports the same cluster-wide numbers.
import { createHash, timingSafeEqual } from "node:crypto";
import { db } from "../../db/client";
import { config } from "../../config";
import { operations } from "../../domain/operations";
import { finalStatuses } from "../../domain/job-states";
import { isActive, statusIn } from "../../queue/guards";
import { observeStoreErrors } from "../../storage/blobs";

/** Bucket bounds in seconds, shared by the duration and queue-wait histograms. */
export const BUCKETS_S = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

// Blob store failures seen by this API process (a worker's show as jobs failed with
// store_unavailable, counted from the jobs table).
let storeErrors = 0;
observeStoreErrors(() => storeErrors++);

/** Constant-time check of `Authorization: Bearer <METRICS_TOKEN>` (open when no token is set). */
export function metricsAuthorized(header: string | null): boolean {
  if (!config.metricsToken) return true;
  const given = /^Bearer\s+(.+)$/i.exec(header ?? "")?.[1] ?? "";
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(config.metricsToken).digest();
  return timingSafeEqual(a, b);
}

const esc = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
const labels = (l: Record<string, string>) => {
  const parts = Object.entries(l).map(([k, v]) => `${k}="${esc(v)}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
};

class Text {
  lines: string[] = [];
  family(name: string, type: "gauge" | "counter" | "histogram", help: string) {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }
  sample(name: string, l: Record<string, string>, v: number) {
    this.lines.push(`${name}${labels(l)} ${Number.isFinite(v) ? v : 0}`);
  }
}

/** One histogram per operation from SQL that yields (operation, le, n) rows plus count/sum. */
async function histogram(out: Text, name: string, help: string, seconds: string, where: string, from = "jobs") {
  const sql = db();
  const buckets = await sql.unsafe(
    `SELECT j.operation, b.le, count(*) FILTER (WHERE ${seconds} <= b.le)::bigint AS n
       FROM ${from} j CROSS JOIN unnest($1::float8[]) AS b(le) WHERE ${where} GROUP BY j.operation, b.le ORDER BY j.operation, b.le`,
    [BUCKETS_S as never],
  );
  const totals = await sql.unsafe(
    `SELECT j.operation, count(*)::bigint AS n, coalesce(sum(${seconds}), 0)::float8 AS s FROM ${from} j WHERE ${where} GROUP BY j.operation`,
  );
  out.family(name, "histogram", help);
  for (const t of totals) {
    for (const b of buckets.filter((r) => r.operation === t.operation))
      out.sample(`${name}_bucket`, { operation: t.operation, le: String(b.le) }, Number(b.n));
    out.sample(`${name}_bucket`, { operation: t.operation, le: "+Inf" }, Number(t.n));
    out.sample(`${name}_sum`, { operation: t.operation }, Number(t.s));
    out.sample(`${name}_count`, { operation: t.operation }, Number(t.n));
  }
}

export async function renderMetrics(): Promise<string> {
  const sql = db();
  const out = new Text();
  const queued = new Map<string, number>(Object.keys(operations).map((o) => [o, 0]));
  const running = new Map(queued);
  for (const r of await sql`SELECT operation, status, count(*)::int AS n FROM jobs WHERE ${sql.unsafe(isActive)} GROUP BY operation, status`) {
    (r.status === "queued" ? queued : running).set(r.operation, r.n);
  }
  out.family("docproc_queue_depth", "gauge", "Jobs waiting in the queue, per operation.");
  for (const [op, n] of queued) out.sample("docproc_queue_depth", { operation: op }, n);
  out.family("docproc_jobs_running", "gauge", "Jobs running now, per operation.");
  for (const [op, n] of running) out.sample("docproc_jobs_running", { operation: op }, n);

  const started = await sql`SELECT operation, sum(attempts)::bigint AS n FROM jobs GROUP BY operation`;
  out.family(
    "docproc_jobs_started_total",
    "counter",
    "Job attempts started (a retried job counts twice), per operation.",
  );
  for (const r of started) out.sample("docproc_jobs_started_total", { operation: r.operation }, Number(r.n));
  const finished =
    await sql`SELECT operation, status, count(*)::bigint AS n FROM jobs WHERE ${sql.unsafe(statusIn(finalStatuses))} GROUP BY operation, status`;
  out.family(
    "docproc_jobs_finished_total",
    "counter",
    "Jobs finished, per operation and final status (succeeded, failed, cancelled).",
  );
  for (const r of finished)
    out.sample("docproc_jobs_finished_total", { operation: r.operation, status: r.status }, Number(r.n));
  const failed =
    await sql`SELECT operation, error->>'code' AS code, count(*)::bigint AS n FROM jobs WHERE status = 'failed' GROUP BY operation, error->>'code'`;
  out.family("docproc_jobs_failed_total", "counter", "Jobs failed, per operation and error code.");
  for (const r of failed)
    out.sample("docproc_jobs_failed_total", { operation: r.operation, code: r.code ?? "unknown" }, Number(r.n));

  await histogram(
    out,
    "docproc_job_duration_seconds",
    "Run time of finished jobs (last start to finish), per operation.",
    "extract(epoch FROM j.finished_at - j.started_at)",
    "j.started_at IS NOT NULL AND j.finished_at IS NOT NULL AND j.status IN ('succeeded', 'failed')",
  );
  await histogram(
    out,
    "docproc_job_queue_wait_seconds",
    "Time from acceptance to the last start, per operation.",
    "extract(epoch FROM j.started_at - j.created_at)",
    "j.started_at IS NOT NULL",
  );

  // Page-parallel jobs (docs/scaling.md): their tasks, per operation of the job.
  const tasksQueued = new Map<string, number>(Object.keys(operations).map((o) => [o, 0]));
  const tasksRunning = new Map(tasksQueued);
  for (const r of await sql`SELECT operation, status, count(*)::int AS n FROM job_tasks WHERE status IN ('queued', 'running') GROUP BY operation, status`) {
    (r.status === "queued" ? tasksQueued : tasksRunning).set(r.operation, r.n);
  }
  out.family("docproc_tasks_queued", "gauge", "Tasks of page-parallel jobs waiting for a worker, per operation.");
  for (const [op, n] of tasksQueued) out.sample("docproc_tasks_queued", { operation: op }, n);
  out.family("docproc_tasks_running", "gauge", "Tasks of page-parallel jobs running now, per operation.");
  for (const [op, n] of tasksRunning) out.sample("docproc_tasks_running", { operation: op }, n);
  await histogram(
    out,
    "docproc_task_duration_seconds",
    "Run time of the finished tasks of page-parallel jobs (last start to done), per operation.",
    "extract(epoch FROM j.finished_at - j.started_at)",
    "j.status = 'done' AND j.started_at IS NOT NULL",
    "job_tasks",
  );

  const deliveries = await sql`SELECT status, count(*)::bigint AS n FROM webhook_deliveries GROUP BY status`;
  out.family(
    "docproc_webhook_deliveries",
    "gauge",
    "Webhook delivery attempts in the delivery log (kept 30 days), by outcome: succeeded, failed, pending, in_flight.",
  );
  for (const r of deliveries) out.sample("docproc_webhook_deliveries", { outcome: r.status }, Number(r.n));

  out.family(
    "docproc_blob_store_errors_total",
    "counter",
    'Blob store operations that failed in this API process (workers\' show as docproc_jobs_failed_total{code="store_unavailable"}).',
  );
  out.sample("docproc_blob_store_errors_total", {}, storeErrors);
  return out.lines.join("\n") + "\n";
}
