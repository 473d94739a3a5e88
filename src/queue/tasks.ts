// The tasks of page-parallel jobs (src/db/migrations/005_job_tasks.sql; docs/scaling.md,
// "Page-parallel jobs"): the split of a claimed job into page-range tasks, their claims
// (SKIP LOCKED, like jobs), heartbeats, completion (the last one hands its worker the job's
// assembly), release, and the reaper of tasks whose worker died. Only the job carries the
// public state: events, credits and the result are the job's (queue/finish.ts), once.
import { db } from "../db/client";
import type { TaskRow } from "../db/rows";
import { queueConfig } from "../config";
import { failJob } from "./finish";
import { statusIn } from "./guards";
import type { JobRow } from "./jobs";

export type { TaskRow } from "../db/rows";

/**
 * Splits a running job held by `workerId` into tasks of the given page lists (in page order):
 * the job keeps running, held by no worker and without a lease, and NOTIFY wakes the fleet.
 * False if the job is no longer this worker's.
 */
export async function splitJob(job: JobRow, workerId: string, tasks: number[][]): Promise<boolean> {
  return db().begin(async (tx) => {
    const [held] = await tx`
      UPDATE jobs SET tasks_total = ${tasks.length}, tasks_done = 0, worker_id = NULL, lease_expires_at = NULL,
             progress_done = 0, progress_total = ${tasks.reduce((n, t) => n + t.length, 0)}, updated_at = now()
       WHERE id = ${job.id} AND worker_id = ${workerId} AND ${tx.unsafe(statusIn(["running"]))} AND NOT cancel_requested
       RETURNING id`;
    if (!held) return false;
    const rows = tasks.map((pages, seq) => ({
      job_id: job.id,
      seq,
      operation: job.operation,
      pages,
      job_created_at: job.created_at,
    }));
    await tx`INSERT INTO job_tasks ${tx(rows, "job_id", "seq", "operation", "pages", "job_created_at")}`;
    await tx`SELECT pg_notify('jobs', 'tasks')`;
    return true;
  }) as Promise<boolean>;
}

/**
 * Claims the first queued task (tasks of older jobs first). With `beforeQueuedJobs`, only a task
 * of a job created before every queued job: the queue stays first come, first served.
 */
export async function claimNextTask(workerId: string, beforeQueuedJobs = false): Promise<TaskRow | null> {
  const sql = db();
  const [task] = await sql<TaskRow[]>`
    UPDATE job_tasks SET status = 'running', attempts = attempts + 1, worker_id = ${workerId},
           lease_expires_at = now() + make_interval(secs => ${queueConfig.leaseS}), started_at = now(), pages_done = 0
     WHERE (job_id, seq) = (SELECT job_id, seq FROM job_tasks WHERE status = 'queued'
                              ${beforeQueuedJobs ? sql`AND job_created_at < COALESCE((SELECT min(created_at) FROM jobs WHERE status = 'queued'), 'infinity')` : sql``}
                            ORDER BY job_created_at, job_id, seq FOR UPDATE SKIP LOCKED LIMIT 1)
     RETURNING *`;
  return task ?? null;
}

/**
 * Renews a running task's lease and adds its new pages to the job's progress. False when the
 * task or its job is no longer this worker's to run (cancelled, failed, reaped): it stops.
 */
export async function taskHeartbeat(task: TaskRow, workerId: string, done: number, reported: number): Promise<boolean> {
  const rows = await db()`
    WITH t AS (
      UPDATE job_tasks SET lease_expires_at = now() + make_interval(secs => ${queueConfig.leaseS}), pages_done = ${done}
       WHERE job_id = ${task.job_id} AND seq = ${task.seq} AND worker_id = ${workerId} AND status = 'running'
       RETURNING job_id)
    UPDATE jobs SET progress_done = progress_done + ${done - reported}, updated_at = now()
     WHERE id = (SELECT job_id FROM t) AND ${db().unsafe(statusIn(["running"]))} AND NOT cancel_requested
     RETURNING id`;
  return rows.length > 0;
}

/**
 * Marks a running task done with its partial result. "last" when it was the job's last task:
 * this worker now holds the job (worker_id, lease) and assembles it; "done" otherwise; "lost"
 * when the task or the job is no longer this worker's (nothing changed).
 */
export async function completeTask(
  task: TaskRow,
  workerId: string,
  partial: { key: string; pages_processed: number; summary: Record<string, number> },
): Promise<"done" | "last" | "lost"> {
  return db().begin(async (tx) => {
    const [t] = await tx<{ pages_done: number }[]>`
      SELECT pages_done FROM job_tasks
       WHERE job_id = ${task.job_id} AND seq = ${task.seq} AND worker_id = ${workerId} AND status = 'running'
       FOR UPDATE`;
    if (!t) return "lost";
    const [job] = await tx<{ tasks_done: number; tasks_total: number }[]>`
      UPDATE jobs SET tasks_done = tasks_done + 1, progress_done = progress_done + ${task.pages.length - t.pages_done},
             updated_at = now()
       WHERE id = ${task.job_id} AND ${tx.unsafe(statusIn(["running"]))} AND NOT cancel_requested AND worker_id IS NULL
       RETURNING tasks_done, tasks_total`;
    if (!job) return "lost";
    await tx`
      UPDATE job_tasks SET status = 'done', pages_done = ${task.pages.length}, pages_processed = ${partial.pages_processed},
             partial_key = ${partial.key}, summary = ${tx.json(partial.summary)}, lease_expires_at = NULL, finished_at = now()
       WHERE job_id = ${task.job_id} AND seq = ${task.seq}`;
    if (job.tasks_done < job.tasks_total) return "done";
    await tx`UPDATE jobs SET worker_id = ${workerId}, lease_expires_at = now() + make_interval(secs => ${queueConfig.leaseS}) WHERE id = ${task.job_id}`;
    return "last";
  }) as Promise<"done" | "last" | "lost">;
}

/** The job's finished tasks in page order, for its assembly. */
export async function doneTasks(jobId: string): Promise<TaskRow[]> {
  return db()<TaskRow[]>`SELECT * FROM job_tasks WHERE job_id = ${jobId} AND status = 'done' ORDER BY seq`;
}

/** Marks a running task failed (its error fails the job: the caller calls failJob). */
export async function failTask(task: TaskRow, workerId: string): Promise<void> {
  await db()`
    UPDATE job_tasks SET status = 'failed', lease_expires_at = NULL, finished_at = now()
     WHERE job_id = ${task.job_id} AND seq = ${task.seq} AND worker_id = ${workerId} AND status = 'running'`;
}

/** Requeues a task its worker cut off at a checkpoint while stopping: like queue/release.ts, the
 * attempt does not count against the task's retries. False if it is no longer ours. */
export async function releaseTask(task: TaskRow, workerId: string): Promise<boolean> {
  const rows = await db()`
    WITH old AS (
      SELECT job_id, seq, pages_done FROM job_tasks
       WHERE job_id = ${task.job_id} AND seq = ${task.seq} AND worker_id = ${workerId} AND status = 'running'
       FOR UPDATE),
    released AS (
      UPDATE job_tasks t SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, pages_done = 0,
             max_attempts = t.max_attempts + 1
        FROM old WHERE t.job_id = old.job_id AND t.seq = old.seq
      RETURNING t.job_id, old.pages_done),
    progress AS (
      UPDATE jobs j SET progress_done = GREATEST(0, j.progress_done - r.pages_done)
        FROM released r WHERE j.id = r.job_id RETURNING j.id)
    SELECT job_id, pg_notify('jobs', 'released') FROM released`;
  return rows.length > 0;
}

/**
 * The reaper of tasks: a running task whose lease expired lost its worker; it is queued again
 * alone (its pages leave the job's progress) until its last attempt, after which its job fails
 * with internal_error. A page-parallel job that ran past JOB_TIMEOUT_S (from its first start)
 * fails with job_timeout: its tasks stop at their next heartbeat.
 */
export async function reapTasks(jobTimeoutS: number): Promise<{ retried: number; failed: string[] }> {
  const retried = await db()`
    WITH old AS (
      SELECT job_id, seq, pages_done FROM job_tasks
       WHERE status = 'running' AND lease_expires_at < now() AND attempts < max_attempts
       FOR UPDATE SKIP LOCKED),
    requeued AS (
      UPDATE job_tasks t SET status = 'queued', worker_id = NULL, lease_expires_at = NULL, pages_done = 0
        FROM old WHERE t.job_id = old.job_id AND t.seq = old.seq
      RETURNING t.job_id, old.pages_done),
    progress AS (
      UPDATE jobs j SET progress_done = GREATEST(0, j.progress_done - s.n)
        FROM (SELECT job_id, sum(pages_done)::int AS n FROM requeued GROUP BY job_id) s
       WHERE j.id = s.job_id RETURNING j.id)
    SELECT job_id FROM requeued`;
  if (retried.length) await db()`SELECT pg_notify('jobs', 'retry')`;
  const failed: string[] = [];
  const dead = await db()<{ job_id: string }[]>`
    SELECT DISTINCT job_id FROM job_tasks WHERE status = 'running' AND lease_expires_at < now() AND attempts >= max_attempts`;
  for (const t of dead) {
    const ok = await failJob(t.job_id, {
      code: "internal_error",
      message: "A worker running part of this job stopped responding twice; the job was not retried again.",
    });
    if (ok) failed.push(t.job_id);
  }
  const late = await db()<{ id: string }[]>`
    SELECT id FROM jobs WHERE ${db().unsafe(statusIn(["running"]))} AND tasks_total IS NOT NULL AND worker_id IS NULL
       AND started_at < now() - make_interval(secs => ${jobTimeoutS})`;
  for (const j of late) {
    const ok = await failJob(j.id, {
      code: "job_timeout",
      message: `The job ran longer than the limit of ${jobTimeoutS} s and was stopped.`,
    });
    if (ok) failed.push(j.id);
  }
  return { retried: retried.length, failed };
}

/** Partial results of finished jobs (any outcome), for the sweeper; at most `limit`. */
export async function sweptPartials(limit: number): Promise<{ job_id: string; seq: number; partial_key: string }[]> {
  return db()<{ job_id: string; seq: number; partial_key: string }[]>`
    SELECT t.job_id, t.seq, t.partial_key FROM job_tasks t JOIN jobs j ON j.id = t.job_id
     WHERE t.partial_key IS NOT NULL AND j.status IN ('succeeded', 'failed', 'cancelled')
     LIMIT ${limit}`;
}

/** Forgets a partial result once its blob is deleted. */
export async function forgetPartial(jobId: string, seq: number): Promise<void> {
  await db()`UPDATE job_tasks SET partial_key = NULL WHERE job_id = ${jobId} AND seq = ${seq}`;
}

/** Records that this worker process is alive (task sizing counts the live ones). */
export async function touchWorker(workerId: string): Promise<void> {
  await db()`INSERT INTO workers (id) VALUES (${workerId}) ON CONFLICT (id) DO UPDATE SET seen_at = now()`;
}

export async function forgetWorker(workerId: string): Promise<void> {
  await db()`DELETE FROM workers WHERE id = ${workerId}`;
}

/** Worker processes seen within a lease; rows of workers gone longer than ten leases are deleted. */
export async function liveWorkers(): Promise<number> {
  await db()`DELETE FROM workers WHERE seen_at < now() - make_interval(secs => ${queueConfig.leaseS * 10})`;
  const [row] = await db()<{ n: number }[]>`
    SELECT count(*)::int AS n FROM workers WHERE seen_at > now() - make_interval(secs => ${queueConfig.leaseS})`;
  return row!.n;
}
