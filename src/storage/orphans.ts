// The orphan check: blobs that no live row references (an upload whose process died between
// writing the blob and its row, a result of an attempt that lost, a crash mid-delete) and
// scratch files of crashed processes, removed once older than the grace period.
import { readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { config } from "../config";
import { db } from "../db/client";
import { blobStore, scratchDir, type ListedBlob } from "./blobs";

const chunk = 500;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** files/<xx>/<file id>: live while a ready or pending file row points at exactly this key. */
async function liveFileKeys(blobs: ListedBlob[]): Promise<Set<string>> {
  const ids = blobs.map((b) => b.key.split("/").pop()!).filter((id) => uuid.test(id));
  if (!ids.length) return new Set();
  const rows =
    await db()`SELECT storage_key FROM files WHERE id = ANY(${ids}::uuid[]) AND status IN ('ready', 'pending_upload')`;
  return new Set(rows.map((r) => r.storage_key as string));
}

/** results/<xx>/<job id>/<attempt>/<name>: live while the job's result points at it and is not deleted;
 * results/<xx>/<job id>/tasks/<seq>-<attempt>/partial: while its task row points at it. */
async function liveResultKeys(blobs: ListedBlob[]): Promise<Set<string>> {
  const ids = [...new Set(blobs.map((b) => b.key.split("/")[2]!).filter((id) => uuid.test(id)))];
  if (!ids.length) return new Set();
  const rows =
    await db()`SELECT result->>'storage_key' AS key FROM jobs WHERE id = ANY(${ids}::uuid[]) AND result_deleted_at IS NULL AND result->>'storage_key' IS NOT NULL
               UNION ALL SELECT partial_key FROM job_tasks WHERE job_id = ANY(${ids}::uuid[]) AND partial_key IS NOT NULL`;
  return new Set(rows.map((r) => r.key as string));
}

export interface OrphanReport {
  files: number;
  results: number;
  scratch: number;
}

/** Removes unreferenced blobs and stale scratch entries older than `graceS`; returns the counts. */
export async function removeOrphans(graceS = config.orphanGraceS, now = Date.now()): Promise<OrphanReport> {
  const cutoff = now - graceS * 1000;
  const report: OrphanReport = { files: 0, results: 0, scratch: 0 };
  for (const [prefix, live] of [
    ["files", liveFileKeys],
    ["results", liveResultKeys],
  ] as const) {
    let batch: ListedBlob[] = [];
    const flush = async () => {
      // Keys are looked up after listing, so a row written meanwhile keeps its blob.
      const keep = await live(batch);
      for (const b of batch) {
        if (keep.has(b.key)) continue;
        await blobStore().delete(b.key);
        report[prefix]++;
      }
      batch = [];
    };
    for await (const b of blobStore().list(prefix)) {
      if (b.modifiedMs > cutoff) continue;
      batch.push(b);
      if (batch.length >= chunk) await flush();
    }
    if (batch.length) await flush();
  }
  // Scratch entries (upload-<id>, job-<id>-<attempt>) are removed by their request or job when it
  // ends; one still here after the grace period belongs to a process that died.
  const scratch = scratchDir();
  for (const name of readdirSync(scratch)) {
    const path = join(scratch, name);
    try {
      if (statSync(path).mtimeMs > cutoff) continue;
      rmSync(path, { recursive: true, force: true });
      report.scratch++;
    } catch {}
  }
  return report;
}
