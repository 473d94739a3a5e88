// Faults during a page-parallel job (docs/scaling.md, "Faults"), with real processes: a convert
// pdf -> jpg job of 96 pages is split into three tasks that two workers run, and while they run
// (1) its Postgres (embedded, on its own port and directory) stops while a task's completion is in
// flight, stays down 4 s and starts again: the job succeeds once, every task is done once (the cut
// attempts ran again, none completed twice), billed once, one event, the same ZIP entries as a run
// without the fault, and no partial is left (the one whose completion never committed is swept);
// (2) its object store (Garage) stops for a few seconds, shorter than STORE_RETRY_S: the workers'
// store calls wait it out and the job succeeds once, every task run once, billed once, the same
// ZIP entries; (3) the store stays down past STORE_RETRY_S until the job ends: the job fails once
// with store_unavailable, no task runs on, nothing is charged, one event, and once the store is
// back the sweeper leaves no partial object in the bucket; the next job succeeds.
// JOB_TEST_PAGE_DELAY_MS slows each task so that the faults land while tasks run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../../src/db/embedded";
import { createAccount, createKey } from "../../src/admin/commands";
import { freePort, hasCorpus, type Service, startService } from "../support/service";
import { garageAvailable, garageBin, startGarage, unownedObjects, type Garage } from "../support/garage";
import { createJob, download, eventsFor, finishedJob, keyFor, makePdf, run, tempDir, uploadOk } from "../support/jobs";
import { childrenOf, spawnBun, type Spawned, waitFor, waitHealthy } from "../support/wait";

const qpdf = run(["qpdf", "--version"]).code === 0;
const ready = hasCorpus && qpdf;
if (!ready) console.log("skipping page-parallel fault tests: needs the corpus and qpdf");
if (ready && !garageAvailable)
  console.log(`skipping the object store outage during a page-parallel job: needs Garage at ${garageBin}`);

// Three tasks of 32 pages (the pdf -> jpg minimum) with two live workers; each task waits 32 x
// 100 ms before rendering, so a fault started while one runs lands mid-task.
const faultEnv = {
  JOB_LEASE_S: "2",
  QUEUE_POLL_MS: "300",
  SWEEP_INTERVAL_S: "1",
  JOB_TEST_PAGE_DELAY_MS: "100",
};
const convert = { operation: "convert", options: { target: "jpg", dpi: 40 } };
/** STORE_RETRY_S of the store outage tests: above a stop-and-start of Garage, below the tests' patience. */
const retryS = 15;

let tmp: ReturnType<typeof tempDir>;
let pdf = "";
beforeAll(() => {
  if (!ready) return;
  tmp = tempDir();
  pdf = makePdf(tmp.dir, "ninety-six.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-96" }]);
});
afterAll(() => tmp?.cleanup());

/** The central directory of a ZIP: each entry's name, CRC-32 and size, in order. */
function zipEntries(zip: Uint8Array): { name: string; crc: number; size: number }[] {
  const b = Buffer.from(zip);
  const eocd = b.lastIndexOf(Buffer.from("PK\x05\x06", "latin1"));
  const count = b.readUInt16LE(eocd + 10);
  let at = b.readUInt32LE(eocd + 16);
  const out = [];
  for (let i = 0; i < count; i++) {
    if (b.readUInt32LE(at) !== 0x02014b50) throw new Error(`no central directory entry at ${at}`);
    const nameLen = b.readUInt16LE(at + 28);
    out.push({
      name: b.toString("latin1", at + 46, at + 46 + nameLen),
      crc: b.readUInt32LE(at + 16),
      size: b.readUInt32LE(at + 24),
    });
    at += 46 + nameLen + b.readUInt16LE(at + 30) + b.readUInt16LE(at + 32);
  }
  return out;
}

/** What the job's tasks and ledger say once it is final: the facts both faults check. */
async function settled(sql: postgres.Sql, jobId: string) {
  const tasks =
    await sql`SELECT seq, status, attempts, partial_key FROM job_tasks WHERE job_id = ${jobId} ORDER BY seq`;
  const [job] = await sql`SELECT tasks_total, tasks_done, pages_processed FROM jobs WHERE id = ${jobId}`;
  const ledger = await sql`SELECT entry, pages FROM credit_ledger WHERE job_id = ${jobId} ORDER BY id`;
  return { tasks, job: job!, ledger: ledger.map((l) => [l.entry, l.pages]) };
}

/** A job of all three tasks that succeeded once: its 96 pages reserved, then charged once, and one event. */
async function expectSucceededOnce(
  svc: Service,
  jobId: string,
  row: Awaited<ReturnType<typeof settled>>["job"],
  ledger: Awaited<ReturnType<typeof settled>>["ledger"],
) {
  expect(row).toEqual({ tasks_total: 3, tasks_done: 3, pages_processed: 96 });
  expect(ledger).toEqual([
    ["reserve", 96],
    ["release", 96],
    ["charge", 96],
  ]);
  expect((await eventsFor(svc, jobId)).map((e) => e.type)).toEqual(["job.succeeded"]);
}

describe.skipIf(!ready)("Postgres restarted during a page-parallel job", () => {
  let pgDir: string;
  let dataDir: string;
  let pg: EmbeddedDatabase;
  let proc: Spawned;
  let sql: postgres.Sql;
  let svc: Service;

  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), "docproc-fanfault-pg-"));
    dataDir = mkdtempSync(join(tmpdir(), "docproc-fanfault-data-"));
    pg = await startEmbeddedPostgres(pgDir, await freePort());
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    proc = spawnBun("src/main.ts", [], {
      ...faultEnv,
      // Longer than a job here runs (a task's cached input is scratch the check would remove).
      ORPHAN_CHECK_INTERVAL_S: "1",
      ORPHAN_GRACE_S: "30",
      DATABASE_URL: pg.url,
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      WORKERS: "2",
    });
    await waitHealthy(origin, proc);
    sql = postgres(pg.url, { max: 2, onnotice: () => {} });
    // The helpers need only these of a Service.
    svc = { baseUrl: `${origin}/api/v1`, origin, sql, dataDir } as unknown as Service;
  }, 120_000);
  afterAll(async () => {
    await proc?.stop();
    await sql?.end({ timeout: 2 }).catch(() => {});
    await pg?.stop().catch(() => {});
    rmSync(pgDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** The supervisor's worker processes. */
  const workerPids = async () =>
    (await childrenOf(proc.proc.pid))
      .filter((c) => c.cmd.includes("roles/worker.ts"))
      .map((c) => c.pid)
      .sort();

  /** Files left under the job's results on the disk store, relative to them. */
  function resultFiles(jobId: string): string[] {
    const dir = join(dataDir, "blobs/results", jobId.slice(0, 2), jobId);
    if (!existsSync(dir)) return [];
    return readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => statSync(join(dir, f)).isFile());
  }

  test("the job succeeds once: each task done once, billed once, one event, the same ZIP as without the fault, no partial left", async () => {
    const account = await createAccount(sql as never, "fanfault@example.com", "starter", true);
    const { key } = await createKey(sql as never, account.id, "live");
    const file = await uploadOk(svc, key, pdf);
    expect(file.page_count).toBe(96);

    const reference = await createJob(svc, key, { file_id: file.id, ...convert });
    const refDone = await finishedJob(svc, key, reference.id, 120_000);
    expect({ status: refDone.status, error: refDone.error ?? null }).toEqual({ status: "succeeded", error: null });
    const refEntries = zipEntries((await download(svc, key, reference.id)).bytes);
    expect(refEntries.length).toBe(96);

    const job = await createJob(svc, key, { file_id: file.id, ...convert });
    await waitFor(
      "two tasks running",
      async () =>
        (await sql`SELECT count(*)::int AS n FROM job_tasks WHERE job_id = ${job.id} AND status = 'running'`)[0]!.n ===
        2,
      60_000,
      50,
    );
    // Postgres stops while a task's completion is in flight, as a restart cuts whatever runs at
    // that moment: a session holds the job's task rows FOR KEY SHARE (heartbeats still renew them;
    // a completion's FOR UPDATE waits), so the first task to finish stores its partial and then
    // waits inside its completing transaction, which the shutdown ends.
    const locker = postgres(pg.url, { max: 1, onnotice: () => {} });
    let unlock = () => {};
    const held = new Promise<void>((r) => {
      unlock = r;
    });
    const holding = locker
      .begin(async (tx) => {
        await tx`SELECT 1 FROM job_tasks WHERE job_id = ${job.id} FOR KEY SHARE`;
        await held;
      })
      .catch(() => {});
    await waitFor(
      "a task's completion waiting on the held rows",
      async () =>
        (
          await sql`SELECT count(*)::int AS n FROM pg_stat_activity
                     WHERE wait_event_type = 'Lock' AND query LIKE '%SELECT pages_done FROM job_tasks%'`
        )[0]!.n > 0,
      60_000,
      50,
    );
    expect(resultFiles(job.id).some((f) => f.startsWith("tasks/"))).toBe(true);
    await pg.stop();
    unlock();
    await holding;
    await locker.end({ timeout: 1 }).catch(() => {});
    await Bun.sleep(4000);
    pg = await startEmbeddedPostgres(pgDir, 1);
    const done = await finishedJob(svc, key, job.id, 120_000);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });

    const { tasks, job: row, ledger } = await settled(sql, job.id);
    // Every task done; the attempts the outage cut ran again, and the job counted each task once.
    expect(tasks.map((t) => t.status)).toEqual(["done", "done", "done"]);
    expect(tasks.every((t) => t.attempts <= 2)).toBe(true);
    expect(tasks.some((t) => t.attempts === 2)).toBe(true);
    await expectSucceededOnce(svc, job.id, row, ledger);
    expect(zipEntries((await download(svc, key, job.id)).bytes)).toEqual(refEntries);
    // Two workers run again (a worker whose connection broke may have exited and been restarted).
    expect((await workerPids()).length).toBe(2);
    // Only the final result is left under the job's results: the assembler deletes the partials it
    // used (just after the job succeeds), the orphan check the one whose completion never
    // committed (once older than ORPHAN_GRACE_S).
    const [stored] = await sql`SELECT result->>'storage_key' AS k FROM jobs WHERE id = ${job.id}`;
    const prefix = `results/${job.id.slice(0, 2)}/${job.id}/`;
    await waitFor(
      "only the result under the job's results",
      async () =>
        resultFiles(job.id)
          .map((f) => prefix + f)
          .join() === stored!.k &&
        (await sql`SELECT 1 FROM job_tasks WHERE job_id = ${job.id} AND partial_key IS NOT NULL`).length === 0,
      60_000,
      250,
    );
  }, 240_000);
});

describe.skipIf(!ready || !garageAvailable)("the object store stopped during a page-parallel job", () => {
  let garage: Garage;
  let svc: Service;

  beforeAll(async () => {
    garage = await startGarage();
    svc = await startService({ workers: 2, env: { ...garage.env, ...faultEnv, STORE_RETRY_S: String(retryS) } });
  }, 120_000);
  afterAll(async () => {
    await svc?.stop();
    await garage?.stop();
  }, 60_000);

  /** Resolves once a task of the job is done (its partial in the bucket) and another is running. */
  const midJob = (jobId: string) =>
    waitFor(
      "a task done and one running",
      async () => {
        const tasks = await svc.sql`SELECT status FROM job_tasks WHERE job_id = ${jobId}`;
        return tasks.some((t) => t.status === "done") && tasks.some((t) => t.status === "running");
      },
      60_000,
      50,
    );

  test("an outage shorter than STORE_RETRY_S costs a delay: the job succeeds once, each task run once, billed once", async () => {
    const sandbox = await svc.newKey();
    const { key } = await keyFor(svc, sandbox.accountId, "live");
    const file = await uploadOk(svc, key, pdf);
    const job = await createJob(svc, key, { file_id: file.id, ...convert });
    await midJob(job.id);
    const down = Date.now();
    await garage.stopServer();
    await Bun.sleep(2000);
    await garage.startServer();
    expect(Date.now() - down).toBeLessThan(retryS * 1000);
    const done = await finishedJob(svc, key, job.id, 120_000);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });

    const { tasks, job: row, ledger } = await settled(svc.sql, job.id);
    expect(tasks.map((t) => [t.status, t.attempts])).toEqual([
      ["done", 1],
      ["done", 1],
      ["done", 1],
    ]);
    await expectSucceededOnce(svc, job.id, row, ledger);
    expect(zipEntries((await download(svc, key, job.id)).bytes).length).toBe(96);
  }, 240_000);

  test("an outage past STORE_RETRY_S fails the job once with store_unavailable: no task runs on, nothing charged, one event; no partial object is left", async () => {
    const sandbox = await svc.newKey();
    const { key } = await keyFor(svc, sandbox.accountId, "live");
    const file = await uploadOk(svc, key, pdf);
    const job = await createJob(svc, key, { file_id: file.id, ...convert });
    // A task done (its partial in the bucket) and one running: the job cannot end without the store.
    await midJob(job.id);
    await garage.stopServer();
    const done = await finishedJob(svc, key, job.id, 120_000);
    await garage.startServer();
    expect(done.status).toBe("failed");
    expect(done.error.code).toBe("store_unavailable");

    const { tasks, job: row, ledger } = await settled(svc.sql, job.id);
    expect(tasks.filter((t) => ["queued", "running"].includes(t.status))).toEqual([]);
    expect(tasks.every((t) => t.attempts === 1)).toBe(true);
    expect(row.tasks_done).toBe(tasks.filter((t) => t.status === "done").length);
    expect(row.tasks_done).toBeGreaterThan(0);
    expect(ledger.map(([entry]) => entry)).toEqual(["reserve", "release"]);
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.failed"]);
    // The sweeper (SWEEP_INTERVAL_S=1) deletes the done tasks' partials once the store answers.
    await waitFor(
      "the sweeper to delete the partial objects",
      async () =>
        (await unownedObjects(garage, svc.sql)).length === 0 &&
        (await svc.sql`SELECT 1 FROM job_tasks WHERE job_id = ${job.id} AND partial_key IS NOT NULL`).length === 0,
      30_000,
      250,
    );

    // The workers took no harm: the same job succeeds, and leaves only its result.
    const again = await createJob(svc, key, { file_id: file.id, ...convert });
    const againDone = await finishedJob(svc, key, again.id, 120_000);
    expect({ status: againDone.status, error: againDone.error ?? null }).toEqual({ status: "succeeded", error: null });
    expect(zipEntries((await download(svc, key, again.id)).bytes).length).toBe(96);
    expect(await unownedObjects(garage, svc.sql)).toEqual([]);
  }, 240_000);
});
