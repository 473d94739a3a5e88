// The worker loop: claim a job (woken by NOTIFY on `jobs`, with a slow poll as a safety net),
// run it in a private work directory (stage its inputs, run its executor, store its result:
// run-job.ts) while a heartbeat renews the lease and publishes progress, then complete or
// fail it with one JobError. One job at a time per worker process; the
// supervisor runs one worker per core. Also runs the reaper and the TTL sweeper.
// Page-parallel jobs (fanout.ts): a claimed job over many pages may be split into tasks; a worker
// claims the tasks of older jobs before a newer job, runs each like a small job of its own, and
// the worker that finishes a job's last task assembles its result.
// Stopping: no more claims; the running job gets stopConfig.jobGraceMs to finish, then it is
// cancelled at its next page checkpoint and handed back to the queue (queue/release.ts).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { isDatabaseUnavailable, type Sql } from "../db/client";
import { config, queueConfig, stopConfig } from "../config";
import { log } from "../log";
import { engine, type JobControl } from "../engine/native";
import { claimNextJob } from "../queue/claim";
import { heartbeat } from "../queue/heartbeat";
import { failJob } from "../queue/finish";
import { releaseJob } from "../queue/release";
import type { JobRow } from "../queue/jobs";
import { reapExpiredLeases } from "../queue/reap";
import {
  claimNextTask,
  failTask,
  forgetWorker,
  reapTasks,
  releaseTask,
  taskHeartbeat,
  touchWorker,
  type TaskRow,
} from "../queue/tasks";
import { sweepExpired } from "../storage/sweeper";
import { deletePrefix, partialKey, resultKey, scratchDir } from "../storage/blobs";
import { toJobError } from "./errors";
import { execute, executionInput, inputPages, stageInputs, storeResult, testPageDelay } from "./run-job";
import { assemble, deletePartials, inputCache, runTask, splitIfParallel } from "./fanout";

export interface WorkerLoop {
  stop(): Promise<void>;
}

export async function startWorkerLoop(sql: Sql): Promise<WorkerLoop> {
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  let stopping = false;
  let wake: (() => void) | null = null;
  // A NOTIFY that arrives while a claim is in flight (no one waiting yet) is remembered, so the
  // next wait returns at once instead of sleeping until the poll with a job queued.
  let poked = false;
  // The work running now: a job, or a task of a page-parallel job (`id` is the job's either way,
  // which job_cancel names); `handBack` queues it again when the worker stops.
  let current: { id: string; control: JobControl; handBack: () => Promise<boolean> } | null = null;
  // Set by stop() once the grace is over: a job cut off now goes back to the queue.
  let handingBack = false;
  const poke = () => {
    poked = true;
    wake?.();
    wake = null;
  };

  const jobsSub = await sql.listen("jobs", poke);
  const cancelSub = await sql.listen("job_cancel", (id) => {
    if (current?.id === id) current.control.cancel();
  });

  /** The wall-clock limit: native code cannot be interrupted safely, so the job is failed and
   * this worker process exits; the supervisor starts a fresh one. */
  function deadline(jobId: string, ms: number, heldBy?: string): Timer {
    return setTimeout(
      () => {
        log.error("job exceeded its wall-clock limit; restarting worker", {
          job_id: jobId,
          limit_s: config.jobTimeoutS,
        });
        void failJob(
          jobId,
          {
            code: "job_timeout",
            message: `The job ran longer than the limit of ${config.jobTimeoutS} s and was stopped.`,
          },
          heldBy,
        ).finally(() => process.exit(70));
      },
      Math.max(0, ms),
    );
  }

  /** What is left of a page-parallel job's time limit, counted from its first start. */
  const jobTimeLeftMs = (job: JobRow) =>
    (job.started_at ? job.started_at.getTime() : Date.now()) + config.jobTimeoutS * 1000 - Date.now();

  /**
   * The database failed a statement of a job's or task's run (down, restarting): whether that
   * statement committed is unknown, so nothing is settled or deleted here. The lease decides: if
   * the work did not commit, the reaper runs it again once the database is back; a result or
   * partial that no row points at is the orphan check's. The loop goes on (its claims wait for
   * the database) instead of dying on the rejection.
   */
  function leftToLease(e: unknown, jobId: string, task?: number): void {
    log.warn("the database failed during the run; the lease decides what runs again", {
      job_id: jobId,
      ...(task === undefined ? {} : { task }),
      error: String(e),
    });
  }

  /** Queues a task again and deletes its partial result; true if it was still ours. */
  async function handBackTask(task: TaskRow): Promise<boolean> {
    const released = await releaseTask(task, workerId).catch((e) => {
      log.warn("handing the task back failed; its lease will expire instead", {
        job_id: task.job_id,
        task: task.seq,
        error: String(e),
      });
      return false;
    });
    if (released) {
      await deletePrefix(partialKey(task.job_id, task.seq, task.attempts, "")).catch(() => {});
      log.info("task handed back to the queue", { job_id: task.job_id, task: task.seq, attempt: task.attempts });
    }
    return released;
  }

  /** Queues the job again and deletes whatever this attempt stored; true if it was still ours. */
  async function handBack(job: { id: string; attempts: number }): Promise<boolean> {
    const released = await releaseJob(job.id, workerId).catch((e) => {
      log.warn("handing the job back failed; its lease will expire instead", { job_id: job.id, error: String(e) });
      return false;
    });
    if (released) {
      await deletePrefix(resultKey(job.id, job.attempts, "")).catch(() => {});
      log.info("job handed back to the queue", { job_id: job.id, attempt: job.attempts });
    }
    return released;
  }

  async function runJob(job: JobRow) {
    const control = new (engine().JobControl)();
    current = { id: job.id, control, handBack: () => handBack(job) };
    const workDir = join(scratchDir(), `job-${job.id}-${job.attempts}`);
    mkdirSync(workDir, { recursive: true });
    // A page-parallel job held for its assembly reports all its pages done.
    const progress = () =>
      job.tasks_total === null ? control.progress() : { done: job.progress_total, total: job.progress_total };
    const beat = setInterval(() => {
      heartbeat(job.id, workerId, progress())
        .then((stillOurs) => {
          if (!stillOurs) control.cancel();
        })
        .catch((e) => log.warn("heartbeat failed", { job_id: job.id, error: String(e) }));
    }, queueConfig.heartbeatMs);
    const timer = deadline(job.id, job.tasks_total === null ? config.jobTimeoutS * 1000 : jobTimeLeftMs(job), workerId);
    try {
      let out;
      if (job.tasks_total !== null) {
        out = await assemble(job, workDir, control);
      } else {
        const inputs = await stageInputs(job, workDir);
        await testPageDelay(inputPages(inputs), control);
        if (control.cancelled) return;
        out = await execute(job, executionInput(job, inputs, workDir, control));
      }
      if (control.cancelled) return;
      await storeResult(job, workerId, out);
      if (job.tasks_total !== null) {
        inputCache.clear();
        await deletePartials(job.id).catch((e) =>
          log.warn("deleting partial results failed; the sweeper will", { job_id: job.id, error: String(e) }),
        );
      }
    } catch (e) {
      if (control.cancelled) return; // cancelled or reaped: someone else already settled the job; or handed back below
      if (isDatabaseUnavailable(e)) return leftToLease(e, job.id);
      const err = toJobError(e);
      if (err.code === "internal_error")
        log.error("job failed", { job_id: job.id, error: String((e as Error)?.stack ?? e) });
      await failJob(job.id, { code: err.code, message: err.message }, workerId).catch((f) => leftToLease(f, job.id));
    } finally {
      clearInterval(beat);
      clearTimeout(timer);
      rmSync(workDir, { recursive: true, force: true });
      current = null;
      // Cut off by stop(): hand it back (a no-op if it finished or was cancelled meanwhile).
      if (handingBack && control.cancelled) await handBack({ id: job.id, attempts: job.attempts });
    }
  }

  /** Runs a task of a page-parallel job; when it was the job's last, assembles the job. */
  async function runTaskOf(task: TaskRow) {
    const control = new (engine().JobControl)();
    current = { id: task.job_id, control, handBack: () => handBackTask(task) };
    const workDir = join(scratchDir(), `task-${task.job_id}-${task.seq}-${task.attempts}`);
    mkdirSync(workDir, { recursive: true });
    let reported = 0;
    const beat = setInterval(() => {
      const done = Math.min(control.progress().done, task.pages.length);
      taskHeartbeat(task, workerId, done, reported)
        .then((stillOurs) => {
          if (stillOurs) reported = done;
          else control.cancel();
        })
        .catch((e) => log.warn("task heartbeat failed", { job_id: task.job_id, task: task.seq, error: String(e) }));
    }, queueConfig.heartbeatMs);
    let timer: Timer | null = null;
    let last: JobRow | null = null;
    try {
      last = await runTask(task, workerId, workDir, control, (job) => {
        timer = deadline(job.id, jobTimeLeftMs(job));
      });
    } catch (e) {
      if (control.cancelled) {
        // stopped, cancelled or reaped: settled elsewhere, or handed back below
      } else if (isDatabaseUnavailable(e)) leftToLease(e, task.job_id, task.seq);
      else {
        const err = toJobError(e);
        if (err.code === "internal_error")
          log.error("task failed", { job_id: task.job_id, task: task.seq, error: String((e as Error)?.stack ?? e) });
        await failTask(task, workerId)
          .then(() => failJob(task.job_id, { code: err.code, message: err.message }))
          .catch((f) => leftToLease(f, task.job_id, task.seq));
      }
    } finally {
      clearInterval(beat);
      if (timer) clearTimeout(timer);
      rmSync(workDir, { recursive: true, force: true });
      current = null;
      if (handingBack && control.cancelled) await handBackTask(task);
      else if (control.cancelled) inputCache.clear();
    }
    if (last && !stopping) await runJob(last);
    else if (last) await handBack(last);
  }

  async function loop() {
    while (!stopping) {
      let job: JobRow | null = null;
      let task: TaskRow | null = null;
      poked = false;
      try {
        // First come, first served: the tasks of jobs older than every queued job, then the
        // oldest queued job, then any task.
        task = await claimNextTask(workerId, true);
        if (!task) job = await claimNextJob(workerId);
        if (!task && !job) task = await claimNextTask(workerId);
      } catch (e) {
        log.warn("claim failed", { error: String(e) });
      }
      if ((job || task) && stopping) {
        // Claimed just as the stop began: give it straight back.
        if (job) await handBack({ id: job.id, attempts: job.attempts });
        if (task) await handBackTask(task);
        break;
      }
      if (task) {
        await runTaskOf(task);
        continue;
      }
      if (job) {
        let split = false;
        if (job.tasks_total === null) {
          try {
            split = await splitIfParallel(job, workerId);
          } catch (e) {
            log.warn("splitting the job failed; it runs whole", { job_id: job.id, error: String(e) });
          }
        }
        if (!split) await runJob(job);
        continue;
      }
      if (poked) continue;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, queueConfig.pollMs);
      });
    }
  }

  // Housekeeping on a timer; SKIP LOCKED makes it safe for every worker to run it.
  await touchWorker(workerId).catch((e) => log.warn("worker heartbeat failed", { error: String(e) }));
  const maintenance = setInterval(
    () => {
      reapExpiredLeases().catch((e) => log.warn("reaper failed", { error: String(e) }));
      reapTasks(config.jobTimeoutS).catch((e) => log.warn("task reaper failed", { error: String(e) }));
      touchWorker(workerId).catch((e) => log.warn("worker heartbeat failed", { error: String(e) }));
    },
    Math.max(500, Math.min(5000, queueConfig.leaseS * 250)),
  );
  const sweeper = setInterval(() => {
    sweepExpired().catch((e) => log.warn("sweeper failed", { error: String(e) }));
  }, config.sweepIntervalS * 1000);

  const running = loop();
  log.info("worker loop started", { worker_id: workerId });
  return {
    async stop() {
      stopping = true;
      clearInterval(maintenance);
      clearInterval(sweeper);
      poke();
      const settled = (ms: number) => Promise.race([running.then(() => true), Bun.sleep(ms).then(() => false)]);
      // The running job may finish within the grace; after it, it is cancelled at its next page
      // checkpoint and runJob hands it back.
      if (!(await settled(stopConfig.jobGraceMs)) && current) {
        const job = current;
        log.warn("job still running at the end of the stop grace; cancelling it and handing it back", {
          job_id: job.id,
          grace_ms: stopConfig.jobGraceMs,
        });
        handingBack = true;
        job.control.cancel();
        // A step of the engine without a checkpoint (one long page): hand the job back without
        // waiting for it; the process exits next, which ends that work.
        if (!(await settled(stopConfig.checkpointWaitMs)) && current === job) {
          log.warn("the engine did not reach a checkpoint; handing the job back without it", { job_id: job.id });
          await job.handBack();
        }
      }
      inputCache.clear();
      await forgetWorker(workerId).catch(() => {});
      // On Ctrl-C the terminal signals the embedded Postgres too; it may already be gone.
      await jobsSub.unlisten().catch(() => {});
      await cancelSub.unlisten().catch(() => {});
    },
  };
}
