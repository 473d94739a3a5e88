// The job state machine of SPEC.md, as data: which transitions exist, and which are final.
export type JobStatus = "queued" | "running" | "succeeded" | "failed" | "cancelled";
export const jobStatuses: JobStatus[] = ["queued", "running", "succeeded", "failed", "cancelled"];
export const finalStatuses: JobStatus[] = ["succeeded", "failed", "cancelled"];

export const transitions: Record<JobStatus, JobStatus[]> = {
  queued: ["running", "succeeded", "failed", "cancelled"],
  // running -> queued: the reaper retries a job whose worker died.
  running: ["succeeded", "failed", "cancelled", "queued"],
  succeeded: [],
  failed: [],
  cancelled: [],
};

export function canTransition(from: JobStatus, to: JobStatus): boolean {
  return transitions[from].includes(to);
}
