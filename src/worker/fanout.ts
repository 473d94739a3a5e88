// Page-parallel jobs on the worker's side (docs/scaling.md, "Page-parallel jobs"): the split of
// a claimed job (domain/fanout.ts decides, queue/tasks.ts stores), the run of one task (its pages
// only; its partial result into the blob store) and the assembly of the job's result by the
// worker that finished its last task. The loop (loop.ts) claims, holds the current work for
// cancellation and stopping, and calls these.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { config } from "../config";
import { db } from "../db/client";
import { JobError } from "../domain/errors";
import { type FanoutFamily, familyPages, fanoutFamily, minTaskPages, planTasks } from "../domain/fanout";
import { type OperationName, withDefaults } from "../domain/operations";
import type { JobControl } from "../engine/native";
import type { JobRow } from "../queue/jobs";
import { findJob } from "../queue/jobs";
import { completeTask, doneTasks, forgetPartial, liveWorkers, splitJob, type TaskRow } from "../queue/tasks";
import { partialKey, scratchDir } from "../storage/blobs";
import { workerStore } from "../storage/retry";
import { log } from "../log";
import { ocrBlocksRunner, ocrSearchableRunner } from "./operations/ocr";
import { pdfToJpgRunner, redactRunner } from "./operations/pagework";
import type { ExecutionOutput, FanoutRunner, InputOnDisk } from "./operations/types";
import { executionInput, stageInputs, testPageDelay } from "./run-job";

const runners: Record<FanoutFamily, FanoutRunner<OperationName>> = {
  ocr_blocks: ocrBlocksRunner as unknown as FanoutRunner<OperationName>,
  ocr_searchable: ocrSearchableRunner as unknown as FanoutRunner<OperationName>,
  pdf_to_jpg: pdfToJpgRunner as unknown as FanoutRunner<OperationName>,
  redact: redactRunner as unknown as FanoutRunner<OperationName>,
};

/** The family of a job if it may be split (its operation and options), before any file is read. */
function familyOf(job: JobRow, inputKind: string): FanoutFamily | null {
  const family = fanoutFamily(job.operation, withDefaults(job.operation, job.options), inputKind);
  // Sandbox OCR answered from fixtures runs whole: nothing to spread.
  if (family?.startsWith("ocr_") && job.mode === "test" && config.sandboxOcr === "fixture") return null;
  return family;
}

/**
 * Splits a just-claimed job into tasks when it is page-separable and has more pages than one
 * task; true if it was split (the loop then claims tasks like any worker). A job that stays
 * whole costs nothing here unless its operation could be split (one read of its file's row).
 */
export async function splitIfParallel(job: JobRow, workerId: string): Promise<boolean> {
  if (!config.fanout || job.file_ids.length !== 1) return false;
  if (!familyOf(job, "pdf")) return false;
  const [file] = await db()<
    { kind: string; page_count: number | null }[]
  >`SELECT kind, page_count FROM files WHERE id = ${job.file_ids[0]!}`;
  if (!file?.page_count) return false;
  const family = familyOf(job, file.kind);
  if (!family) return false;
  const pages = familyPages(family, withDefaults(job.operation, job.options), file.page_count);
  // Pages beyond the document are the engine's to refuse (invalid_options), on the whole job.
  if (pages.some((p) => p >= file.page_count!)) return false;
  // Too few pages for two tasks whatever the fleet: no need to count the workers.
  if (pages.length < 2 * minTaskPages[family]) return false;
  const tasks = planTasks(pages, family, await liveWorkers(), config.fanoutTasksPerWorker);
  if (!tasks) return false;
  const split = await splitJob(job, workerId, tasks);
  if (split) log.info("job split into tasks", { job_id: job.id, tasks: tasks.length, pages: pages.length });
  return split;
}

/**
 * The staged input of the last page-parallel job this worker touched: its next task of the
 * same job (the common case: each worker takes several) reads it from disk again instead of
 * from the store. Files never change, so a copy is good for as long as the job runs.
 */
class InputCache {
  private entry: { jobId: string; dir: string; inputs: Promise<InputOnDisk[]> } | null = null;
  get(job: JobRow): Promise<InputOnDisk[]> {
    if (this.entry?.jobId !== job.id) {
      this.clear();
      const dir = join(scratchDir(), `inputs-${job.id}-${process.pid}`);
      mkdirSync(dir, { recursive: true });
      const entry = { jobId: job.id, dir, inputs: stageInputs(job, dir) };
      // A failed download is not kept: the next task tries again.
      entry.inputs.catch(() => this.entry === entry && this.clear());
      this.entry = entry;
    }
    return this.entry.inputs;
  }
  clear(): void {
    if (this.entry) rmSync(this.entry.dir, { recursive: true, force: true });
    this.entry = null;
  }
}
export const inputCache = new InputCache();

function familyOrThrow(job: JobRow, inputs: InputOnDisk[]): FanoutFamily {
  const family = familyOf(job, inputs[0]?.kind ?? "");
  if (!family) throw new JobError("internal_error", `Job ${job.id} has tasks but is not page-separable.`);
  return family;
}

/**
 * Runs one claimed task: its pages of the input, its partial result stored under the job's
 * results, the task marked done. Returns the job when this was its last task (this worker now
 * holds the job and assembles it next), else null. Throws the task's error.
 */
export async function runTask(
  task: TaskRow,
  workerId: string,
  workDir: string,
  control: JobControl,
  onJob: (job: JobRow) => void,
): Promise<JobRow | null> {
  const job = await findJob(task.job_id);
  if (job?.status !== "running" || job.cancel_requested) {
    control.cancel();
    return null;
  }
  onJob(job);
  const inputs = await inputCache.get(job);
  const family = familyOrThrow(job, inputs);
  await testPageDelay(task.pages.length, control);
  if (control.cancelled) return null;
  const out = await runners[family].task(executionInput(job, inputs, workDir, control), task.pages);
  if (control.cancelled) return null;
  const key = partialKey(job.id, task.seq, task.attempts, "partial");
  await workerStore().put(key, out.partialPath, "application/json");
  const outcome = await completeTask(task, workerId, {
    key,
    pages_processed: out.pages_processed,
    summary: out.summary,
  });
  if (outcome === "lost") {
    await workerStore()
      .delete(key)
      .catch(() => {});
    control.cancel();
    return null;
  }
  return outcome === "last" ? ((await findJob(job.id)) ?? null) : null;
}

/** Builds a page-parallel job's result from its tasks' partials (this worker holds the job). */
export async function assemble(job: JobRow, workDir: string, control: JobControl): Promise<ExecutionOutput> {
  const tasks = await doneTasks(job.id);
  if (tasks.length !== job.tasks_total)
    throw new JobError("internal_error", `Job ${job.id} has ${tasks.length} of ${job.tasks_total} tasks done.`);
  const inputs = await inputCache.get(job);
  const family = familyOrThrow(job, inputs);
  const partials = [];
  for (const t of tasks) {
    const path = await workerStore().localCopy(t.partial_key!, join(workDir, "partials", `${t.seq}`));
    partials.push({ path, summary: t.summary ?? {} });
  }
  const out = await runners[family].assemble(executionInput(job, inputs, workDir, control), partials);
  return { ...out, pages_processed: tasks.reduce((n, t) => n + (t.pages_processed ?? 0), 0) };
}

/** Deletes the partial results of a job (after its assembly; the sweeper does it for the others). */
export async function deletePartials(jobId: string): Promise<void> {
  for (const t of await doneTasks(jobId)) {
    if (!t.partial_key) continue;
    await workerStore().delete(t.partial_key);
    await forgetPartial(jobId, t.seq);
  }
}
