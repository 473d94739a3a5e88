// The TTL sweeper: deletes expired input files (recording file.expired in the same transaction
// as the status change) and expired job results, forgets old idempotency records, and trims
// the webhook delivery log; every ORPHAN_CHECK_INTERVAL_S it also runs the orphan check.
import { db } from "../db/client";
import { recordEvent } from "../events/record";
import { presentFile } from "../presenters/file";
import type { FileRow } from "../db/rows";
import { blobStore, deletePrefix, resultDirKey } from "./blobs";
import { config } from "../config";
import { log } from "../log";
import { removeOrphans, type OrphanReport } from "./orphans";
import { forgetPartial, sweptPartials } from "../queue/tasks";

/** Finished webhook delivery attempts are kept this long (the log is for debugging recent
 * deliveries; pending and in-flight attempts are never trimmed). Not set by the spec. */
export const DELIVERY_LOG_RETENTION_DAYS = 30;

let lastOrphanCheck = 0;

export async function sweepExpired(
  batch = 100,
): Promise<{ files: number; results: number; deliveries: number; orphans: OrphanReport | null }> {
  const keys: string[] = [];
  const files = (await db().begin(async (tx) => {
    const rows = await tx<FileRow[]>`
      UPDATE files SET status = 'expired', deleted_at = now()
       WHERE id IN (SELECT id FROM files WHERE status IN ('ready', 'pending_upload') AND expires_at <= now()
                    ORDER BY expires_at LIMIT ${batch} FOR UPDATE SKIP LOCKED)
       RETURNING *`;
    for (const f of rows) {
      keys.push(f.storage_key);
      await recordEvent(tx, f.account_id, f.mode, "file.expired", presentFile(f));
    }
    return rows.length;
  })) as number;
  // The rows are settled first: a blob left by a failed delete is an orphan the next sweep of
  // the store can find, never a ready file without bytes.
  for (const k of keys) if (k) await blobStore().delete(k);

  const results = await db()`
    UPDATE jobs SET result_deleted_at = now()
     WHERE id IN (SELECT id FROM jobs WHERE result_expires_at <= now() AND result_deleted_at IS NULL
                  LIMIT ${batch} FOR UPDATE SKIP LOCKED)
     RETURNING id, result`;
  for (const r of results) await deletePrefix(resultDirKey(r.id));
  // Partial results of page-parallel jobs that ended without their assembly (failed, cancelled)
  // or whose assembler died before deleting them.
  for (const p of await sweptPartials(batch)) {
    await blobStore().delete(p.partial_key);
    await forgetPartial(p.job_id, p.seq);
  }
  await db()`DELETE FROM idempotency_records WHERE expires_at <= now()`;
  const deliveries = await db()`
    DELETE FROM webhook_deliveries
     WHERE id IN (SELECT id FROM webhook_deliveries
                   WHERE status IN ('succeeded', 'failed')
                     AND created_at < now() - make_interval(days => ${DELIVERY_LOG_RETENTION_DAYS})
                   LIMIT ${batch * 10})`;
  let orphans: OrphanReport | null = null;
  if (Date.now() - lastOrphanCheck >= config.orphanCheckIntervalS * 1000) {
    lastOrphanCheck = Date.now();
    orphans = await removeOrphans();
    if (orphans.files || orphans.results || orphans.scratch) log.warn("orphaned blobs removed", { ...orphans });
  }
  return { files, results: results.length, deliveries: deliveries.count, orphans };
}
