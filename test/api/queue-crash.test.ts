// Issue 3, point 3 and "Done when": a worker killed with SIGKILL in the middle of a job — the
// reaper retries the job once (attempts 2) on a restarted worker, and a job whose worker dies on
// both attempts fails with internal_error; nothing is billed twice (at most one ledger row per
// job and entry type), and every outcome has exactly one event. Heartbeats keep a job that runs
// longer than its lease alive. JOB_LEASE_S=2 and JOB_TEST_PAGE_DELAY_MS make this fast.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { client, startService, type Service, hasCorpus } from "../support/service";
import { waitFor, isAlive } from "../support/wait";
import {
  createJob,
  download,
  eventsFor,
  finishedJob,
  keyFor,
  qpdfCheck,
  rolePids,
  tempDir,
  uploadOk,
  waitJobRow,
  workerPidOf,
} from "../support/jobs";
import { currentPeriod } from "../../src/billing/credits";

const pageDelayMs = 400;
let svc: Service;
let tmp: ReturnType<typeof tempDir>;

beforeAll(async () => {
  svc = await startService({ workers: 1, env: { JOB_LEASE_S: "2", JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs) } });
  tmp = tempDir();
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  tmp?.cleanup();
}, 60_000);

/** Waits until the job runs its `attempt`-th attempt, lets it get going, then SIGKILLs its worker. */
async function killWorkerRunning(jobId: string, attempt: number): Promise<number> {
  const row = await waitJobRow(svc, jobId, ["running"], 20_000, (r) => r.attempts === attempt);
  await Bun.sleep(pageDelayMs + 200); // mid-job: at least one heartbeat and page checkpoint done
  const [still] = await svc.sql`SELECT status, attempts, worker_id FROM jobs WHERE id = ${jobId}`;
  expect(still).toEqual({ status: "running", attempts: attempt, worker_id: row.worker_id });
  const pid = workerPidOf(row.worker_id);
  expect(await rolePids(svc, "worker")).toContain(pid); // it is the supervisor's worker child
  process.kill(pid, "SIGKILL");
  await waitFor(`worker ${pid} to die`, () => !isAlive(pid), 5_000);
  return pid;
}

async function ledgerCounts(jobId: string): Promise<Record<string, number>> {
  const rows =
    await svc.sql`SELECT entry, count(*)::int AS n FROM credit_ledger WHERE job_id = ${jobId} GROUP BY entry`;
  return Object.fromEntries(rows.map((r) => [r.entry, r.n]));
}

/**
 * A live job billed like convert/compress would be (1 credit per page, reserved at accept),
 * executed as a rotate: the billed operations have no executor in this release, and the queue
 * and ledger paths under test do not depend on the operation.
 */
async function billedJob(pages: number) {
  const sandbox = await svc.newKey();
  const live = await keyFor(svc, sandbox.accountId, "live");
  const file = await uploadOk(svc, live.key, "scanned-multipage-assembly.pdf");
  expect(file.page_count).toBe(pages);
  const id = randomUUID();
  await svc.sql.begin(async (tx) => {
    await tx`INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, file_ids, options, pages_estimated, credits_per_page, credits_reserved, billed)
             VALUES (${id}, ${sandbox.accountId}, ${live.keyId}, 'live', 'rotate', 'page_ops', ARRAY[${file.id}]::uuid[], '{"degrees":90}', ${pages}, 1, ${pages}, true)`;
    await tx`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
             VALUES (${sandbox.accountId}, ${id}, 'reserve', ${pages}, ${pages}, 'rotate', ${currentPeriod()})`;
    await tx`SELECT pg_notify('jobs', ${id})`;
  });
  return { id, key: live.key, accountId: sandbox.accountId };
}

describe("a worker killed mid-job", () => {
  test.skipIf(!hasCorpus)(
    "the job is retried once on a restarted worker (attempts 2) and succeeds; one event; a valid result",
    async () => {
      const { key } = await svc.newKey({ mode: "live" });
      const f = await uploadOk(svc, key, "scanned-multipage-assembly.pdf");
      const job = await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } });
      const killed = await killWorkerRunning(job.id, 1);

      const done = await finishedJob(svc, key, job.id, 30_000);
      expect(done.status).toBe("succeeded");
      expect(done.attempts).toBe(2);
      const [row] = await svc.sql`SELECT worker_id, result FROM jobs WHERE id = ${job.id}`;
      expect(workerPidOf(row!.worker_id)).not.toBe(killed);
      // Results are stored per attempt: a stalled earlier attempt can never clobber this one.
      expect(row!.result.storage_key).toContain(`/${job.id}/2/`);
      // The supervisor replaced the killed worker.
      const workers = await rolePids(svc, "worker");
      expect(workers.length).toBe(1);
      expect(workers).not.toContain(killed);

      expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
      expect(await ledgerCounts(job.id)).toEqual({}); // rotate is free: never billed at all
      const d = await download(svc, key, job.id);
      expect(d.status).toBe(200);
      const out = join(tmp.dir, "retried.pdf");
      writeFileSync(out, d.bytes);
      expect(qpdfCheck(out).code).toBe(0);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a billed job killed mid-run is settled exactly once: one reserve, one release, one charge",
    async () => {
      const job = await billedJob(6);
      await killWorkerRunning(job.id, 1);
      const done = await waitJobRow(svc, job.id, ["succeeded", "failed", "cancelled"], 30_000);
      expect(done.status).toBe("succeeded");
      expect(done.attempts).toBe(2);
      expect(done.pages_processed).toBe(6);
      expect(await ledgerCounts(job.id)).toEqual({ reserve: 1, release: 1, charge: 1 });
      const [charge] =
        await svc.sql`SELECT credits, pages FROM credit_ledger WHERE job_id = ${job.id} AND entry = 'charge'`;
      expect(charge).toEqual({ credits: 6, pages: 6 });
      const usage = (await client(svc.baseUrl, job.key)("GET", "/usage")).json;
      expect(usage).toMatchObject({ used_credits: 6, reserved_credits: 0, pages_in_flight: 0 });
      expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
    },
    60_000,
  );

  test.skipIf(!hasCorpus)(
    "a job whose worker dies on both attempts fails with internal_error; the reservation is released, nothing charged",
    async () => {
      const job = await billedJob(6);
      const first = await killWorkerRunning(job.id, 1);
      const second = await killWorkerRunning(job.id, 2);
      expect(second).not.toBe(first);
      const done = await finishedJob(svc, job.key, job.id, 30_000);
      expect(done.status).toBe("failed");
      expect(done.error.code).toBe("internal_error");
      expect(done.attempts).toBe(2);
      expect(done.result).toBeNull();
      expect(await ledgerCounts(job.id)).toEqual({ reserve: 1, release: 1 });
      const ev = await eventsFor(svc, job.id);
      expect(ev.map((e) => e.type)).toEqual(["job.failed"]);
      expect(ev[0].payload.data.object.error.code).toBe("internal_error");
      // It stays failed: no third attempt.
      await Bun.sleep(2_500);
      const [row] = await svc.sql`SELECT status, attempts FROM jobs WHERE id = ${job.id}`;
      expect(row).toEqual({ status: "failed", attempts: 2 });
    },
    60_000,
  );
});

describe("leases and heartbeats", () => {
  test.skipIf(!hasCorpus)(
    "a live worker's heartbeats keep a job longer than its lease running: attempts stays 1",
    async () => {
      const { key } = await svc.newKey();
      const f = await uploadOk(svc, key, "scanned-multipage-assembly.pdf");
      // 6 pages x 400 ms of test delay, plus the run itself: longer than the 2 s lease.
      const job = await createJob(svc, key, { operation: "split", file_id: f.id, options: { mode: "every_page" } });
      const running = await waitJobRow(svc, job.id, ["running"], 20_000);
      const firstLease = running.lease_expires_at as Date;
      await waitFor(
        "the lease to be renewed",
        async () => {
          const [r] = await svc.sql`SELECT lease_expires_at, status FROM jobs WHERE id = ${job.id}`;
          return r!.status !== "running" || (r!.lease_expires_at as Date) > firstLease;
        },
        5_000,
      );
      const done = await finishedJob(svc, key, job.id, 20_000);
      expect(done.status).toBe("succeeded");
      expect(done.attempts).toBe(1);
      expect(Date.parse(done.finished_at) - Date.parse(done.started_at)).toBeGreaterThan(2_000);
    },
    60_000,
  );
});

describe("a stalled worker (alive, but silent past its lease)", () => {
  let two: Service;
  beforeAll(async () => {
    two = await startService({ workers: 2, env: { JOB_LEASE_S: "2", JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs) } });
  }, 60_000);
  afterAll(async () => {
    await two?.stop();
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "its job is retried on the other worker; when it wakes up it neither finishes the job again nor touches the result",
    async () => {
      const { key } = await two.newKey();
      const f = await uploadOk(two, key, "scanned-multipage-assembly.pdf");
      const job = await createJob(two, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } });
      const first = await waitJobRow(two, job.id, ["running"], 20_000, (r) => r.attempts === 1);
      await Bun.sleep(pageDelayMs + 100);
      const stalled = workerPidOf(first.worker_id);
      process.kill(stalled, "SIGSTOP");
      try {
        const done = await waitJobRow(two, job.id, ["succeeded", "failed", "cancelled"], 30_000);
        expect(done.status).toBe("succeeded");
        expect(done.attempts).toBe(2);
        expect(workerPidOf(done.worker_id)).not.toBe(stalled);
      } finally {
        process.kill(stalled, "SIGCONT");
      }
      // Give the resumed worker time to notice (heartbeat), or to finish its stale attempt.
      await Bun.sleep(3 * pageDelayMs + 1_500);
      const [row] = await two.sql`SELECT status, attempts, worker_id, result FROM jobs WHERE id = ${job.id}`;
      expect(row!.status).toBe("succeeded");
      expect(row!.attempts).toBe(2);
      expect(workerPidOf(row!.worker_id)).not.toBe(stalled);
      expect((await eventsFor(two, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
      const d = await download(two, key, job.id);
      expect(d.status).toBe(200);
      const out = join(tmp.dir, "stalled.pdf");
      writeFileSync(out, d.bytes);
      expect(qpdfCheck(out).code).toBe(0);
      expect(isAlive(stalled)).toBe(true); // it was never killed, and went back to work
    },
    60_000,
  );
});
