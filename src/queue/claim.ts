// Claims the oldest queued job for this worker. SKIP LOCKED lets any number of workers on any
// number of machines claim concurrently without waiting on each other or taking a job twice.
import { db } from "../db/client";
import { queueConfig } from "../config";
import { canMoveTo } from "./guards";
import type { JobRow } from "./jobs";

export async function claimNextJob(workerId: string): Promise<JobRow | null> {
  const [job] = await db()<JobRow[]>`
    UPDATE jobs SET status = 'running', attempts = attempts + 1, worker_id = ${workerId},
           lease_expires_at = now() + make_interval(secs => ${queueConfig.leaseS}),
           started_at = COALESCE(started_at, now()), updated_at = now(), progress_done = 0
     WHERE id = (SELECT id FROM jobs WHERE ${db().unsafe(canMoveTo("running"))} ORDER BY created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
     RETURNING *`;
  return job ?? null;
}
