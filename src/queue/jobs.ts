// The `jobs` table's reads and insert that the API's modules need, over its typed row
// (src/db/rows.ts). The transitions (claim, heartbeat, finish, reap) are the other files of this
// folder and return the same row; route handlers hold no SQL on jobs.
import type { Queryable } from "../db/client";
export type { JobRow, StoredResult } from "../db/rows";
import { db } from "../db/client";
import type { JobRow } from "../db/rows";
import type { JobStatus } from "../domain/job-states";
import type { JobKind, OperationName, RequestOptionsOf } from "../domain/operations";
import { isActive } from "./guards";

/** The job with this id, of any account (callers check ownership). */
export async function findJob(id: string): Promise<JobRow | undefined> {
  const [row] = await db()<JobRow[]>`SELECT * FROM jobs WHERE id = ${id}`;
  return row;
}

/** A page of an account's jobs of one mode, newest first, after `cursor`; `limit + 1` rows tell has_more. */
export async function listJobRows(q: {
  accountId: string;
  mode: "live" | "test";
  status?: JobStatus;
  cursor?: { id: string; created_at: Date };
  limit: number;
}): Promise<JobRow[]> {
  const sql = db();
  return sql<JobRow[]>`
    SELECT * FROM jobs WHERE account_id = ${q.accountId} AND mode = ${q.mode}
      ${q.status ? sql`AND status = ${q.status}` : sql``}
      ${q.cursor ? sql`AND (created_at, id) < (${q.cursor.created_at}, ${q.cursor.id})` : sql``}
    ORDER BY created_at DESC, id DESC LIMIT ${q.limit + 1}`;
}

/** Queued or running jobs of an API key (its concurrency limit). */
export async function countActiveJobs(tx: Queryable, keyId: string): Promise<number> {
  const [row] = await tx<
    { active: number }[]
  >`SELECT count(*)::int AS active FROM jobs WHERE key_id = ${keyId} AND ${tx.unsafe(isActive)}`;
  return row!.active;
}

export interface NewJob {
  id: string;
  accountId: string;
  keyId: string;
  mode: "live" | "test";
  operation: OperationName;
  kind: JobKind;
  fileIds: string[];
  options: RequestOptionsOf<OperationName>;
  metadata: Record<string, string>;
  pagesEstimated: number;
  creditsPerPage: number;
  creditsReserved: number;
  billed: boolean;
}

/** Inserts a queued job (inside the caller's transaction) and returns its row. */
export async function insertJob(tx: Queryable, j: NewJob): Promise<JobRow> {
  const [row] = await tx<JobRow[]>`
    INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, file_ids, options, metadata, pages_estimated,
                      credits_per_page, credits_reserved, billed)
    VALUES (${j.id}, ${j.accountId}, ${j.keyId}, ${j.mode}, ${j.operation}, ${j.kind},
            ${j.fileIds}, ${tx.json(j.options as never)}, ${tx.json(j.metadata)}, ${j.pagesEstimated},
            ${j.creditsPerPage}, ${j.creditsReserved}, ${j.billed})
    RETURNING *`;
  return row!;
}

/** Per UTC day and operation: the jobs of an account's mode that succeeded in [start, end), and their pages. */
export async function succeededPerDay(
  accountId: string,
  mode: "live" | "test",
  bounds: { start: string; end: string },
): Promise<{ date: string; operation: OperationName; pages: number; jobs: number }[]> {
  return db()<{ date: string; operation: OperationName; pages: number; jobs: number }[]>`
    SELECT to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, operation,
           COALESCE(SUM(pages_processed), 0)::int AS pages, count(*)::int AS jobs
      FROM jobs
     WHERE account_id = ${accountId} AND mode = ${mode} AND status = 'succeeded'
       AND finished_at >= ${bounds.start} AND finished_at < ${bounds.end}
     GROUP BY 1, 2`;
}
