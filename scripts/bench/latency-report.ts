// The latency harness's results: one run at one rate, the whole report, and the report as
// Markdown.
import type { JobRecord, Knee, MixEntry, OpStats } from "./latency-lib";

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

/** The report without every job's timeline (what the bench runner records). */
export function withoutJobs(rep: LatencyReport): LatencyReport {
  return { ...rep, runs: rep.runs.map(({ jobs: _jobs, ...r }) => r) };
}
