// The final transitions of a job. Each is one transaction: the job's new status, its ledger
// entry and its event row commit together. Guards on the current status make every call safe
// to repeat and let a cancel win over a worker that finishes late.
import { db } from "../db/client";
import { recordEvent } from "../events/record";
import { releaseCredits, settleCredits } from "../billing/credits";
import { presentJob } from "../presenters/job";
import { config } from "../config";
import { secretOptionNames } from "../domain/operations";
import { canMoveTo } from "./guards";
import type { JobRow, StoredResult } from "./jobs";
import type { JobErrorCode } from "../domain/errors";
import type { Queryable } from "../db/client";

/** Ends the unfinished tasks of a page-parallel job, in the transaction that ends the job. Their
 * workers see it at their next heartbeat (or at once: the job_cancel NOTIFY) and stop. */
async function endTasks(tx: Queryable, job: JobRow): Promise<void> {
  if (job.tasks_total === null) return;
  await tx`
    UPDATE job_tasks SET status = 'cancelled', lease_expires_at = NULL, finished_at = now()
     WHERE job_id = ${job.id} AND status IN ('queued', 'running')`;
}

// Passwords in options are needed only while the job may still run; a final state erases them.
const eraseSecrets = ["options", ...secretOptionNames.map((n) => `'${n}'`)].join(" - ");

/** Succeeds a running job held by `workerId`; false if the job is no longer ours (cancelled, reaped). */
export async function completeJob(
  jobId: string,
  workerId: string,
  result: StoredResult,
  pagesProcessed: number,
): Promise<boolean> {
  return db().begin(async (tx) => {
    const [job] = await tx<JobRow[]>`
      UPDATE jobs SET options = ${tx.unsafe(eraseSecrets)}, status = 'succeeded', result = ${tx.json(result as never)}, pages_processed = ${pagesProcessed},
             progress_done = progress_total, result_expires_at = now() + make_interval(secs => ${config.fileTtlS}),
             finished_at = now(), updated_at = now(), lease_expires_at = NULL
       WHERE id = ${jobId} AND ${tx.unsafe(canMoveTo("succeeded"))} AND worker_id = ${workerId}
       RETURNING *`;
    if (!job) return false;
    if (job.billed) await settleCredits(tx, jobId, pagesProcessed, job.credits_per_page);
    await recordEvent(tx, job.account_id, job.mode, "job.succeeded", presentJob(job));
    return true;
  }) as Promise<boolean>;
}

/** Fails a queued or running job. With `workerId`, only if that worker still holds it. */
export async function failJob(
  jobId: string,
  error: { code: JobErrorCode; message: string },
  workerId?: string,
): Promise<boolean> {
  return db().begin(async (tx) => {
    const [job] = await tx<JobRow[]>`
      UPDATE jobs SET options = ${tx.unsafe(eraseSecrets)}, status = 'failed', error = ${tx.json(error)}, finished_at = now(), updated_at = now(), lease_expires_at = NULL
       WHERE id = ${jobId} AND ${tx.unsafe(canMoveTo("failed"))} ${workerId ? tx`AND worker_id = ${workerId}` : tx``}
       RETURNING *`;
    if (!job) return false;
    if (job.billed) await releaseCredits(tx, jobId);
    await endTasks(tx, job);
    await recordEvent(tx, job.account_id, job.mode, "job.failed", presentJob(job));
    if (job.tasks_total !== null) await tx`SELECT pg_notify('job_cancel', ${jobId})`;
    return true;
  }) as Promise<boolean>;
}

/**
 * Cancels a queued or running job at once: the reservation is released and job.cancelled
 * recorded now; a running worker sees `cancel_requested` at its next page checkpoint and
 * discards its work. Returns the job row after the call, whatever its state.
 */
export async function cancelJob(jobId: string): Promise<JobRow | undefined> {
  return db().begin(async (tx) => {
    const [job] = await tx<JobRow[]>`
      UPDATE jobs SET options = ${tx.unsafe(eraseSecrets)}, status = 'cancelled', cancel_requested = true, finished_at = now(), updated_at = now()
       WHERE id = ${jobId} AND ${tx.unsafe(canMoveTo("cancelled"))}
       RETURNING *`;
    if (job) {
      if (job.billed) await releaseCredits(tx, jobId);
      await endTasks(tx, job);
      await recordEvent(tx, job.account_id, job.mode, "job.cancelled", presentJob(job));
      await tx`SELECT pg_notify('job_cancel', ${jobId})`;
      return job;
    }
    const [current] = await tx<JobRow[]>`SELECT * FROM jobs WHERE id = ${jobId}`;
    return current;
  }) as Promise<JobRow | undefined>;
}
