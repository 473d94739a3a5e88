// The worker loop: claim a job (woken by NOTIFY on `jobs`, with a slow poll as a safety net),
// run it in a private work directory (stage its inputs, run its executor, store its result:
// run-job.ts) while a heartbeat renews the lease and publishes progress, then complete or
// fail it with one JobError. One job at a time per worker process; the
// supervisor runs one worker per core. Also runs the reaper and the TTL sweeper.
// Stopping: no more claims; the running job gets stopConfig.jobGraceMs to finish, then it is
// cancelled at its next page checkpoint and handed back to the queue (queue/release.ts).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { config, queueConfig, stopConfig } from "../config";
import { log } from "../log";
import { engine, type JobControl } from "../engine/native";
import { claimNextJob } from "../queue/claim";
import { heartbeat } from "../queue/heartbeat";
import { failJob } from "../queue/finish";
import { releaseJob } from "../queue/release";
import type { JobRow } from "../queue/jobs";
import { reapExpiredLeases } from "../queue/reap";
import { sweepExpired } from "../storage/sweeper";
import { deletePrefix, resultKey, scratchDir } from "../storage/blobs";
import { withDefaults } from "../domain/operations";
import { toJobError } from "./errors";
import { execute, stageInputs, storeResult, testPageDelay } from "./run-job";

export interface WorkerLoop {
  stop(): Promise<void>;
}

export async function startWorkerLoop(sql: Sql): Promise<WorkerLoop> {
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  let stopping = false;
  let wake: (() => void) | null = null;
  let current: { id: string; attempts: number; control: JobControl } | null = null;
  // Set by stop() once the grace is over: a job cut off now goes back to the queue.
  let handingBack = false;
  const poke = () => {
    wake?.();
    wake = null;
  };

  const jobsSub = await sql.listen("jobs", poke);
  const cancelSub = await sql.listen("job_cancel", (id) => {
    if (current?.id === id) current.control.cancel();
  });

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
    current = { id: job.id, attempts: job.attempts, control };
    const workDir = join(scratchDir(), `job-${job.id}-${job.attempts}`);
    mkdirSync(workDir, { recursive: true });
    const beat = setInterval(() => {
      heartbeat(job.id, workerId, control.progress())
        .then((stillOurs) => {
          if (!stillOurs) control.cancel();
        })
        .catch((e) => log.warn("heartbeat failed", { job_id: job.id, error: String(e) }));
    }, queueConfig.heartbeatMs);
    // The wall-clock limit: native code cannot be interrupted safely, so the job is failed
    // and this worker process exits; the supervisor starts a fresh one.
    const deadline = setTimeout(() => {
      log.error("job exceeded its wall-clock limit; restarting worker", {
        job_id: job.id,
        limit_s: config.jobTimeoutS,
      });
      void failJob(
        job.id,
        {
          code: "job_timeout",
          message: `The job ran longer than the limit of ${config.jobTimeoutS} s and was stopped.`,
        },
        workerId,
      ).finally(() => process.exit(70));
    }, config.jobTimeoutS * 1000);
    try {
      const inputs = await stageInputs(job, workDir);
      await testPageDelay(inputs, control);
      if (control.cancelled) return;
      const out = await execute(job, {
        jobId: job.id,
        operation: job.operation,
        options: withDefaults(job.operation, job.options),
        inputs,
        workDir,
        control,
        mode: job.mode,
      });
      if (control.cancelled) return;
      await storeResult(job, workerId, out);
    } catch (e) {
      if (control.cancelled) return; // cancelled or reaped: someone else already settled the job; or handed back below
      const err = toJobError(e);
      if (err.code === "internal_error")
        log.error("job failed", { job_id: job.id, error: String((e as Error)?.stack ?? e) });
      await failJob(job.id, { code: err.code, message: err.message }, workerId);
    } finally {
      clearInterval(beat);
      clearTimeout(deadline);
      rmSync(workDir, { recursive: true, force: true });
      current = null;
      // Cut off by stop(): hand it back (a no-op if it finished or was cancelled meanwhile).
      if (handingBack && control.cancelled) await handBack({ id: job.id, attempts: job.attempts });
    }
  }

  async function loop() {
    while (!stopping) {
      let job: JobRow | null = null;
      try {
        job = await claimNextJob(workerId);
      } catch (e) {
        log.warn("claim failed", { error: String(e) });
      }
      if (job && stopping) {
        // Claimed just as the stop began: give it straight back.
        await handBack({ id: job.id, attempts: job.attempts });
        break;
      }
      if (job) {
        await runJob(job);
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, queueConfig.pollMs);
      });
    }
  }

  // Housekeeping on a timer; SKIP LOCKED makes it safe for every worker to run it.
  const maintenance = setInterval(
    () => {
      reapExpiredLeases().catch((e) => log.warn("reaper failed", { error: String(e) }));
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
          await handBack(job);
        }
      }
      // On Ctrl-C the terminal signals the embedded Postgres too; it may already be gone.
      await jobsSub.unlisten().catch(() => {});
      await cancelSub.unlisten().catch(() => {});
    },
  };
}
