// The reaper: a running job whose lease expired lost its worker (crash, kill, stall). It is
// queued again once; after its last attempt it fails with internal_error (credits released).
import { db } from "../db/client";
import { failJob } from "./finish";
import { canMoveTo, statusIn } from "./guards";

export async function reapExpiredLeases(): Promise<{ retried: string[]; failed: string[] }> {
  const retried = await db()`
    UPDATE jobs SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, progress_done = 0, updated_at = now()
     WHERE id IN (SELECT id FROM jobs WHERE ${db().unsafe(canMoveTo("queued"))} AND lease_expires_at < now() AND attempts < max_attempts
                  FOR UPDATE SKIP LOCKED)
     RETURNING id`;
  if (retried.length) await db()`SELECT pg_notify('jobs', 'retry')`;
  const dead =
    await db()`SELECT id, worker_id FROM jobs WHERE ${db().unsafe(statusIn(["running"]))} AND lease_expires_at < now() AND attempts >= max_attempts`;
  const failed: string[] = [];
  for (const j of dead) {
    const ok = await failJob(
      j.id,
      {
        code: "internal_error",
        message: "The worker running this job stopped responding twice; the job was not retried again.",
      },
      j.worker_id,
    );
    if (ok) failed.push(j.id);
  }
  return { retried: retried.map((r) => r.id as string), failed };
}
