// The worker loop: claim a job (woken by NOTIFY on `jobs`, with a slow poll as a safety net),
// run it in a private work directory (stage its inputs, run its executor, store its result:
// run-job.ts) while a heartbeat renews the lease and publishes progress, then complete or
// fail it with one JobError. One job at a time per worker process; the
// supervisor runs one worker per core. Also runs the reaper and the TTL sweeper.
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { config, queueConfig } from "../config";
import { log } from "../log";
import { engine, type JobControl } from "../engine/native";
import { claimNextJob } from "../queue/claim";
import { heartbeat } from "../queue/heartbeat";
import { failJob } from "../queue/finish";
import type { JobRow } from "../queue/jobs";
import { reapExpiredLeases } from "../queue/reap";
import { sweepExpired } from "../storage/sweeper";
import { scratchDir } from "../storage/blobs";
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
  let current: { id: string; control: JobControl } | null = null;
  const poke = () => {
    wake?.();
    wake = null;
  };

  const jobsSub = await sql.listen("jobs", poke);
  const cancelSub = await sql.listen("job_cancel", (id) => {
    if (current?.id === id) current.control.cancel();
  });

  async function runJob(job: JobRow) {
    const control = new (engine().JobControl)();
    current = { id: job.id, control };
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
      if (control.cancelled) return; // cancelled or reaped: someone else already settled the job
      const err = toJobError(e);
      if (err.code === "internal_error")
        log.error("job failed", { job_id: job.id, error: String((e as Error)?.stack ?? e) });
      await failJob(job.id, { code: err.code, message: err.message }, workerId);
    } finally {
      clearInterval(beat);
      clearTimeout(deadline);
      rmSync(workDir, { recursive: true, force: true });
      current = null;
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
      // Let the current job finish its step; a job cut off here is retried via its lease.
      await Promise.race([running, Bun.sleep(10_000)]);
      // On Ctrl-C the terminal signals the embedded Postgres too; it may already be gone.
      await jobsSub.unlisten().catch(() => {});
      await cancelSub.unlisten().catch(() => {});
    },
  };
}
