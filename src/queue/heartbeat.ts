// Renews a running job's lease and publishes its progress. Returns false when the job is no
// longer this worker's to run (cancelled, or reaped after a stall), so the worker stops.
import { db } from "../db/client";
import { queueConfig } from "../config";
import { statusIn } from "./guards";

export async function heartbeat(
  jobId: string,
  workerId: string,
  progress: { done: number; total: number },
): Promise<boolean> {
  const rows = await db()`
    UPDATE jobs SET lease_expires_at = now() + make_interval(secs => ${queueConfig.leaseS}),
           progress_done = ${progress.done}, progress_total = ${progress.total}, updated_at = now()
     WHERE id = ${jobId} AND worker_id = ${workerId} AND ${db().unsafe(statusIn(["running"]))} AND NOT cancel_requested
     RETURNING id`;
  return rows.length > 0;
}
