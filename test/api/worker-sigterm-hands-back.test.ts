// Issue 41, item 6: "SIGTERM to a worker: stops claiming and finishes or releases its job" within
// the grace period. Real worker processes (src/roles/worker.ts, as the supervisor starts them)
// on the test's database and data directory: a worker SIGTERMed mid-job claims nothing more;
// a job that finishes within WORKER_STOP_GRACE_S is finished; one that does not is cancelled at
// its next page checkpoint and handed back to the queue at once (not after its lease), and the
// worker exits 0. The other worker then runs it exactly once: one charge, one event, one webhook,
// no result or scratch directory of the stopped attempt. JOB_TEST_PAGE_DELAY_MS makes the job
// slow; JOB_LEASE_S=30 and QUEUE_POLL_MS=60000 mean only the hand-back's NOTIFY can explain a
// claim within seconds.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { startService, type Service } from "../support/service";
import { spawnBun, waitFor, type Spawned } from "../support/wait";
import { createJob, eventsFor, keyFor, uploadMadePdfOk, waitJobRow, workerPidOf } from "../support/jobs";
import { startReceiver } from "../support/webhook-receiver";
import { makeLocalhostCert } from "../support/localhost-cert";
import { currentPeriod } from "../../src/billing/credits";
import { resultDirKey } from "../../src/storage/blobs";

const pageDelayMs = 500;
const graceS = 2;
let svc: Service;
// Live-mode webhooks need https: a self-signed certificate for "localhost", trusted by the
// workers (whose dispatcher delivers) through NODE_EXTRA_CA_CERTS, as in webhooks.test.ts.
const tls = makeLocalhostCert("worker-sigterm");
let rx: ReturnType<typeof startReceiver>;
const workers: Spawned[] = [];

beforeAll(async () => {
  rx = startReceiver({ tls });
  // The API only: the test starts the workers itself.
  svc = await startService({ workers: 0 });
}, 60_000);
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop(5_000)));
});
afterAll(async () => {
  rx?.stop();
  await svc?.stop();
  tls.remove();
}, 60_000);

function startWorker(env: Record<string, string> = {}): Spawned {
  const w = spawnBun("src/roles/worker.ts", [], {
    DATABASE_URL: svc.databaseUrl,
    DATA_DIR: svc.dataDir,
    JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs),
    WORKER_STOP_GRACE_S: String(graceS),
    JOB_LEASE_S: "30",
    QUEUE_POLL_MS: "60000",
    WEBHOOK_ALLOW_PRIVATE_TARGETS: "1",
    NODE_EXTRA_CA_CERTS: tls.certPath,
    LOG_LEVEL: "info",
    WORKER_NAME: undefined,
    ...env,
  });
  workers.push(w);
  return w;
}

async function started(w: Spawned) {
  await waitFor(
    "the worker loop to start",
    () => {
      if (w.proc.exitCode !== null) throw new Error(`worker exited (${w.proc.exitCode}):\n${w.output()}`);
      return w.output().includes("worker loop started");
    },
    30_000,
  );
}

/** A live job billed 1 credit per page (reserved at accept), run as a rotate (see queue-crash.test.ts). */
async function billedJob(accountId: string, keyId: string, fileId: string, pages: number) {
  const id = randomUUID();
  await svc.sql.begin(async (tx) => {
    await tx`INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, file_ids, options, pages_estimated, credits_per_page, credits_reserved, billed)
             VALUES (${id}, ${accountId}, ${keyId}, 'live', 'rotate', 'page_ops', ARRAY[${fileId}]::uuid[], '{"degrees":90}', ${pages}, 1, ${pages}, true)`;
    await tx`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
             VALUES (${accountId}, ${id}, 'reserve', ${pages}, ${pages}, 'rotate', ${currentPeriod()})`;
    await tx`SELECT pg_notify('jobs', ${id})`;
  });
  return id;
}

async function ledgerCounts(jobId: string): Promise<Record<string, number>> {
  const rows =
    await svc.sql`SELECT entry, count(*)::int AS n FROM credit_ledger WHERE job_id = ${jobId} GROUP BY entry`;
  return Object.fromEntries(rows.map((r) => [r.entry, r.n]));
}

/** SIGTERMs `w` and resolves with its exit code and how long it took. */
async function sigterm(w: Spawned): Promise<{ code: number | null; ms: number }> {
  const t0 = Date.now();
  w.proc.kill("SIGTERM");
  const code = await Promise.race([w.proc.exited, Bun.sleep(30_000).then(() => "hung" as const)]);
  if (code === "hung") throw new Error(`worker still running 30 s after SIGTERM:\n${w.output()}`);
  return { code, ms: Date.now() - t0 };
}

describe("SIGTERM to a worker: stops claiming and finishes or releases its job", () => {
  test("a job outliving the grace is handed back to the queue at once and finished by another worker exactly once (charged once, one event, one webhook, nothing left of the stopped attempt); the worker claims nothing more and exits 0", async () => {
    const sandbox = await svc.newKey();
    const live = await keyFor(svc, sandbox.accountId, "live");
    const hook = await fetch(`${svc.baseUrl}/webhooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${live.key}`, "content-type": "application/json" },
      body: JSON.stringify({ url: rx.url("/stop"), events: ["job.succeeded", "job.failed", "job.cancelled"] }),
    });
    expect(hook.status, await hook.clone().text()).toBe(201);
    const pages = 12; // 12 x 500 ms: far longer than the 2 s grace
    const big = await uploadMadePdfOk(svc, live.key, pages);
    const small = await uploadMadePdfOk(svc, live.key, 1);

    const a = startWorker();
    await started(a);
    const jobId = await billedJob(sandbox.accountId, live.keyId, big.id, pages);
    const first = await waitJobRow(svc, jobId, ["running"], 20_000);
    expect(workerPidOf(first.worker_id)).toBe(a.proc.pid);
    // The other worker: idle, polling only once a minute, so NOTIFY alone can wake it.
    const b = startWorker();
    await started(b);
    await Bun.sleep(pageDelayMs + 200); // mid-job

    const stopping = sigterm(a);
    // Stops claiming: a job queued after the SIGTERM goes to the other worker.
    await Bun.sleep(100);
    const other = await createJob(svc, live.key, { operation: "rotate", file_id: small.id, options: { degrees: 180 } });
    const { code, ms } = await stopping;
    expect(code).toBe(0);
    expect(ms).toBeGreaterThanOrEqual(graceS * 1000 - 200); // it gave the job its grace
    expect(ms).toBeLessThan(graceS * 1000 + 4_000); // then handed it back without waiting for the lease
    expect(a.output()).toContain("job handed back to the queue");

    const otherDone = await waitJobRow(svc, other.id, ["succeeded", "failed", "cancelled"], 20_000);
    expect(otherDone.status).toBe("succeeded");
    expect(workerPidOf(otherDone.worker_id)).toBe(b.proc.pid);
    expect(otherDone.attempts).toBe(1);

    // Handed back at once: claimed again by the other worker long before the 30 s lease ran out.
    const again = await waitJobRow(
      svc,
      jobId,
      ["running", "succeeded", "failed", "cancelled"],
      5_000,
      (r) => r.attempts === 2,
    );
    expect(workerPidOf(again.worker_id)).toBe(b.proc.pid);
    const done = await waitJobRow(svc, jobId, ["succeeded", "failed", "cancelled"], 30_000);
    expect(done.status).toBe("succeeded");
    expect(done.attempts).toBe(2); // two claims; the handed-back one is not counted as a failure:
    expect(done.max_attempts).toBe(3); // the job keeps its whole retry budget
    expect(done.pages_processed).toBe(pages);
    expect(done.result.storage_key).toContain(`/${jobId}/2/`);

    // Charged once: one reserve, one release, one charge of the pages.
    expect(await ledgerCounts(jobId)).toEqual({ reserve: 1, release: 1, charge: 1 });
    const [charge] =
      await svc.sql`SELECT credits, pages FROM credit_ledger WHERE job_id = ${jobId} AND entry = 'charge'`;
    expect(charge).toEqual({ credits: pages, pages });
    // One event, one webhook (none for the hand-back).
    expect((await eventsFor(svc, jobId)).map((e) => e.type)).toEqual(["job.succeeded"]);
    await rx.waitFor((h) => h.some((x) => x.json?.data?.object?.id === jobId), 20_000, "the job.succeeded webhook");
    await Bun.sleep(1_000);
    const hits = rx.at("/stop").filter((h) => h.json?.data?.object?.id === jobId);
    expect(hits.map((h) => [h.json.type, h.json.data.object.status])).toEqual([["job.succeeded", "succeeded"]]);

    // Nothing orphaned: only the second attempt's result, no work directory left.
    const results = join(svc.dataDir, "blobs", resultDirKey(jobId));
    expect(readdirSync(results)).toEqual(["2"]);
    const scratch = join(svc.dataDir, "tmp");
    expect(existsSync(scratch) ? readdirSync(scratch).filter((n) => n.startsWith(`job-${jobId}`)) : []).toEqual([]);
  }, 90_000);

  test("a job that finishes within the grace is finished by the stopping worker, not handed back; the worker exits 0", async () => {
    const { key } = await svc.newKey();
    const f = await uploadMadePdfOk(svc, key, 3); // 3 x 500 ms: inside the grace once SIGTERM comes mid-job
    const a = startWorker({ WORKER_STOP_GRACE_S: "10" });
    await started(a);
    const job = await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } });
    await waitJobRow(svc, job.id, ["running"], 20_000);
    await Bun.sleep(pageDelayMs);
    const { code, ms } = await sigterm(a);
    expect(code).toBe(0);
    expect(ms).toBeLessThan(10_000);
    const [row] = await svc.sql`SELECT status, attempts, max_attempts, worker_id FROM jobs WHERE id = ${job.id}`;
    expect(row).toMatchObject({ status: "succeeded", attempts: 1, max_attempts: 2 });
    expect(workerPidOf(row!.worker_id)).toBe(a.proc.pid);
    expect(a.output()).not.toContain("handed back");
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
  }, 60_000);
});
