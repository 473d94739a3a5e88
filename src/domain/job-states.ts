// The job state machine (docs/api.md, Jobs), as data: which transitions exist, and which are final.
// The queue's SQL guards are generated from this table (queue/guards.ts), so it is the one rule.
export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";

export const transitions: Record<JobStatus, readonly JobStatus[]> = {
  // queued -> failed or cancelled: a job can end before any worker claims it.
  queued: ["running", "failed", "cancelled"],
  // running -> queued: the reaper retries a job whose worker died; a stopping worker hands its
  // job back unfinished.
  running: ["succeeded", "failed", "cancelled", "queued"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export const jobStatuses = Object.keys(transitions) as JobStatus[];
/** Statuses no transition leaves. */
export const finalStatuses = jobStatuses.filter((s) => transitions[s].length === 0);
/** Statuses a job can still leave: it counts against the key's concurrency limit. */
export const activeStatuses = jobStatuses.filter((s) => transitions[s].length > 0);

/** The statuses from which a job may move to `to`. */
export function sourcesOf(to: JobStatus): JobStatus[] {
  return jobStatuses.filter((s) => transitions[s].includes(to));
}
