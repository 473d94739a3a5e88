// The three steps of running a claimed job, each on its own: stage the inputs into the work
// directory, run the operation's executor (typed by the catalogue), store the result and
// complete the job. The loop (loop.ts) holds the lease, the deadline and the error handling.
import { join } from "node:path";
import { queueConfig } from "../config";
import { db } from "../db/client";
import { JobError } from "../domain/errors";
import { type OperationName, withDefaults } from "../domain/operations";
import type { JobControl } from "../engine/native";
import { completeJob } from "../queue/finish";
import type { JobRow, StoredResult } from "../queue/jobs";
import { deletePrefix, resultKey } from "../storage/blobs";
import { workerStore } from "../storage/retry";
import { executors } from "./operations";
import type { ExecutionInput, ExecutionOutput, ExecutorMap, InputOnDisk } from "./operations/types";

interface InputFileRow {
  id: string;
  kind: string;
  page_count: number | null;
  filename: string;
  storage_key: string;
  status: string;
}

/** Copies the job's input files, in file_ids order, from the blob store into `workDir/inputs`:
 * on disk the blob itself, on S3 a copy streamed in (nothing is read from another process's disk). */
export async function stageInputs(job: JobRow, workDir: string): Promise<InputOnDisk[]> {
  const files = await db()<
    InputFileRow[]
  >`SELECT id, kind, page_count, filename, storage_key, status FROM files WHERE id IN ${db()(job.file_ids)}`;
  const byId = new Map(files.map((f) => [f.id, f]));
  const inputs: InputOnDisk[] = [];
  for (const [i, id] of job.file_ids.entries()) {
    const f = byId.get(id);
    if (f?.status !== "ready")
      throw new JobError("not_found", `Input file ${id} was deleted or expired before the job ran.`);
    const path = await workerStore().localCopy(f.storage_key, join(workDir, "inputs", `${i}-${id}`));
    inputs.push({ id, path, kind: f.kind, page_count: f.page_count, filename: f.filename });
  }
  return inputs;
}

/** Fault injection for tests only (JOB_TEST_PAGE_DELAY_MS): waits per page (a whole job's input
 * pages, or a task's) before running. */
export async function testPageDelay(pages: number, control: JobControl): Promise<void> {
  for (let p = 0; p < pages && queueConfig.testPageDelayMs > 0 && !control.cancelled; p++)
    await Bun.sleep(queueConfig.testPageDelayMs);
}

/** Pages of a job's inputs (a file without a page count counts as one). */
export const inputPages = (inputs: InputOnDisk[]) => inputs.reduce((n, i) => n + (i.page_count ?? 1), 0);

/** What an executor or a page-parallel runner is given for a claimed job. */
export function executionInput(
  job: JobRow,
  inputs: InputOnDisk[],
  workDir: string,
  control: JobControl,
): ExecutionInput {
  return {
    jobId: job.id,
    operation: job.operation,
    options: withDefaults(job.operation, job.options),
    inputs,
    workDir,
    control,
    mode: job.mode,
  };
}

/** Runs the operation's executor. */
export function execute<Op extends OperationName>(
  job: JobRow,
  input: ExecutionInput<Op>,
): Promise<ExecutionOutput<Op>> {
  const executor: ExecutorMap[Op] = executors[input.operation];
  if (!executor) throw new JobError("internal_error", `No executor for ${job.operation}.`);
  return executor(input);
}

/** Stores a file result in the blob store (JSON stays in the row) and completes the job; a result
 * stored for a job that is no longer this worker's (cancelled, reaped) is deleted again. */
export async function storeResult(job: JobRow, workerId: string, out: ExecutionOutput): Promise<void> {
  let stored: StoredResult;
  if (out.result.type === "file") {
    const { path, note, ...file } = out.result;
    const key = resultKey(job.id, job.attempts, file.filename);
    const bytes = await workerStore().put(key, path, file.content_type);
    stored = {
      type: "file",
      storage_key: key,
      filename: file.filename,
      content_type: file.content_type,
      bytes,
      ...(note ? { note } : {}),
    };
  } else stored = { type: "json", json: out.result.json };
  const ok = await completeJob(job.id, workerId, stored, out.pages_processed);
  if (!ok && stored.type === "file") await deletePrefix(resultKey(job.id, job.attempts, ""));
}
