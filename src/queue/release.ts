// Hands a running job back to the queue: its worker is stopping (SIGTERM) and cut the job off
// at a checkpoint (worker/loop.ts). The job is queued again at once, first in line (claims go by
// created_at), and NOTIFY wakes a free worker, so it does not wait for its lease to run out.
// The attempt was not a failure: max_attempts grows by one, so the job keeps its whole retry
// budget for real crashes, while `attempts` still counts every claim (results and work
// directories are per attempt: the stopped attempt can never touch the next one's). The credit
// reservation stays held for the next attempt, nothing is charged, and no event is recorded (so
// no webhook): the job is simply queued again.
import { db } from "../db/client";
import { canMoveTo } from "./guards";

/** Queues a running job held by `workerId` again; false if it is no longer ours (finished, cancelled, reaped). */
export async function releaseJob(jobId: string, workerId: string): Promise<boolean> {
  const rows = await db()`
    WITH released AS (
      UPDATE jobs SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, progress_done = 0,
             max_attempts = max_attempts + 1, updated_at = now()
       WHERE id = ${jobId} AND ${db().unsafe(canMoveTo("queued"))} AND worker_id = ${workerId}
       RETURNING id)
    SELECT id, pg_notify('jobs', 'released') FROM released`;
  return rows.length > 0;
}
