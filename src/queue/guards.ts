// The SQL conditions on a job's status, written out from domain/job-states.ts's table: each
// transition's UPDATE matches only the statuses the table lets a job leave for it.
import { activeStatuses, sourcesOf, type JobStatus } from "../domain/job-states";

/** `status IN ('a', 'b')` as SQL text (one status gives `= 'a'` to the planner, so partial indexes still match). */
export function statusIn(statuses: readonly JobStatus[], column = "status"): string {
  if (statuses.length === 0) throw new Error("statusIn needs at least one status");
  return `${column} IN (${statuses.map((s) => `'${s}'`).join(", ")})`;
}

/** The guard of a transition into `to`. */
export function canMoveTo(to: JobStatus): string {
  return statusIn(sourcesOf(to));
}

/** Queued or running: what the concurrency limit counts. */
export const isActive = statusIn(activeStatuses);
