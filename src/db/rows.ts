// The rows of the tables, typed once from the migrations (src/db/migrations/), for the queries
// that read them: `sql<JobRow[]>\`...\``. Column names as in SQL (snake_case), as are the API's fields.
import type { JobErrorCode } from "../domain/errors";
import type { JobStatus } from "../domain/job-states";
import type { JobKind, OperationName, RequestOptionsOf } from "../domain/operations";

/** A stored result: a file in the blob store, or JSON (ocr blocks). */
export type StoredResult =
  | { type: "file"; storage_key: string; filename: string; content_type: string; bytes: number; note?: string }
  | { type: "json"; json: unknown };

/** One row of `jobs` (src/db/migrations/002_files_jobs.sql). */
export interface JobRow {
  id: string;
  account_id: string;
  key_id: string;
  mode: "live" | "test";
  operation: OperationName;
  kind: JobKind;
  status: JobStatus;
  file_ids: string[];
  /** As the client sent them (split: with its mode); secrets erased once the job is final. */
  options: RequestOptionsOf<OperationName>;
  metadata: Record<string, string>;
  pages_estimated: number;
  credits_per_page: number;
  credits_reserved: number;
  billed: boolean;
  pages_processed: number | null;
  progress_done: number;
  progress_total: number;
  result: StoredResult | null;
  result_expires_at: Date | null;
  result_deleted_at: Date | null;
  error: { code: JobErrorCode; message: string } | null;
  attempts: number;
  max_attempts: number;
  worker_id: string | null;
  lease_expires_at: Date | null;
  cancel_requested: boolean;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
  /** Page-parallel jobs (src/db/migrations/005_job_tasks.sql): the number of tasks, or null
   * for a job run whole on one worker; and how many of them are done. */
  tasks_total: number | null;
  tasks_done: number;
}

/** One row of `job_tasks` (src/db/migrations/005_job_tasks.sql): a page range of a job. */
export interface TaskRow {
  job_id: string;
  seq: number;
  operation: OperationName;
  pages: number[];
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  attempts: number;
  max_attempts: number;
  worker_id: string | null;
  lease_expires_at: Date | null;
  pages_done: number;
  pages_processed: number | null;
  partial_key: string | null;
  summary: Record<string, number> | null;
  job_created_at: Date;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

/** One row of `files` (src/db/migrations/002_files_jobs.sql). `size_bytes` is a bigint. */
export interface FileRow {
  id: string;
  account_id: string;
  mode: "live" | "test";
  filename: string;
  content_type: string;
  kind: string;
  size_bytes: bigint | number;
  page_count: number | null;
  encrypted: boolean;
  status: "pending_upload" | "ready" | "deleted" | "expired";
  /** Written with the row (POST /files and presigned creation alike). */
  storage_key: string;
  created_at: Date;
  expires_at: Date;
  deleted_at: Date | null;
}
