// Issue 13, point 5: the service on "three hosts" — one API process and two worker processes,
// each with its own DATA_DIR, one Postgres, one Garage. Jobs of every operation succeed (inputs
// and results travel through the object store only); a worker SIGKILLed mid-job loses nothing
// (retried once, billed once); an API SIGKILLed mid-upload leaves no file and no orphan object.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { client, startService, type Service } from "../support/service";
import { everyOperationInputs, everyOperationJobs } from "../support/every-operation";
import { garageAvailable, garageBin, startGarage, unownedObjects, type Garage } from "../support/garage";
import {
  createJob,
  download,
  finishedJob,
  keyFor,
  rolePids,
  uploadBytes,
  waitJobRow,
  workerPidOf,
} from "../support/jobs";
import { isAlive, spawnBun, waitFor, type Spawned } from "../support/wait";
import { tinyPdf } from "../support/pdf";

if (!garageAvailable)
  console.log(`skipping scale-out tests: no Garage at ${garageBin} (./scripts/setup-test.sh installs it)`);

const pageDelayMs = 300;

describe.skipIf(!garageAvailable)("one API and two workers on separate disks, one Postgres, one Garage", () => {
  let garage: Garage;
  let api: Service;
  const workers: { proc: Spawned; dataDir: string }[] = [];

  beforeAll(async () => {
    garage = await startGarage();
    const shared = {
      ...garage.env,
      JOB_LEASE_S: "3",
      QUEUE_POLL_MS: "500",
      JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs),
    };
    api = await startService({ args: ["--role", "api"], env: shared });
    for (let i = 0; i < 2; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), `docproc-worker${i}-`));
      workers.push({
        dataDir,
        proc: spawnBun("src/main.ts", ["--role", "worker"], {
          ...shared,
          DATABASE_URL: api.databaseUrl,
          DATA_DIR: dataDir,
          WORKERS: "1",
        }),
      });
    }
  }, 60_000);
  afterAll(async () => {
    for (const w of workers) {
      await w.proc.stop();
      rmSync(w.dataDir, { recursive: true, force: true });
    }
    await api?.stop();
    await garage?.stop();
  }, 60_000);

  /** Every object in the bucket belongs to a live file or to a succeeded job's result. */
  async function expectNoOrphanObjects() {
    expect(await unownedObjects(garage, api.sql)).toEqual([]);
  }

  test("jobs of every operation succeed, run by both workers, and no blob is written to any process's DATA_DIR", async () => {
    const { key, accountId } = await api.newKey();
    const call = client(api.baseUrl, key);
    const up = (i: (typeof everyOperationInputs)[keyof typeof everyOperationInputs]) =>
      uploadBytes(api, key, i.bytes, i.name, i.type).then((r) => r.json);
    const [pdf, pdf2, csv] = [
      await up(everyOperationInputs.pdf),
      await up(everyOperationInputs.pdf2),
      await up(everyOperationInputs.csv),
    ];
    expect([pdf.status, pdf2.status, csv.status]).toEqual(["ready", "ready", "ready"]);
    const specs = everyOperationJobs({ pdf: pdf.id, pdf2: pdf2.id, csv: csv.id });
    // Two at a time: a sandbox key may have 2 queued or running jobs, one for each worker.
    const jobs: any[] = [];
    const done: any[] = [];
    for (let i = 0; i < specs.length; i += 2) {
      // A key of the same account per pair: one sandbox key's 30 requests a minute are fewer
      // than this test makes when the jobs run fast.
      const pairKey = (await keyFor(api, accountId, "test")).key;
      const pair = await Promise.all(specs.slice(i, i + 2).map((s) => createJob(api, pairKey, s)));
      jobs.push(...pair);
      done.push(...(await Promise.all(pair.map((j) => finishedJob(api, pairKey, j.id, 120_000)))));
    }
    for (const [i, d] of done.entries())
      expect({ op: specs[i]!.operation, status: d.status, error: d.error ?? null }).toEqual({
        op: specs[i]!.operation,
        status: "succeeded",
        error: null,
      });

    // Chained across the store: the protect result is unlocked, the docx result converted back.
    const protectedUp = await uploadBytes(
      api,
      key,
      (await download(api, key, jobs[5].id)).bytes,
      "locked.pdf",
      "application/pdf",
    );
    const docxUp = await uploadBytes(
      api,
      key,
      (await download(api, key, jobs[7].id)).bytes,
      "back.docx",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    );
    const unlock = await createJob(api, key, {
      operation: "unlock",
      file_id: protectedUp.json.id,
      options: { password: "pw" },
    });
    const toPdf = await createJob(api, key, {
      operation: "convert",
      file_id: docxUp.json.id,
      options: { target: "pdf" },
    });
    expect((await finishedJob(api, key, unlock.id, 60_000)).status).toBe("succeeded");
    expect((await finishedJob(api, key, toPdf.id, 120_000)).status).toBe("succeeded");

    const rows =
      await api.sql`SELECT worker_id FROM jobs WHERE account_id = (SELECT account_id FROM api_keys WHERE id = (SELECT key_id FROM jobs WHERE id = ${jobs[0].id}))`;
    expect(new Set(rows.map((r) => workerPidOf(r.worker_id))).size).toBe(2);
    for (const dir of [api.dataDir, ...workers.map((w) => w.dataDir)])
      expect(existsSync(join(dir, "blobs"))).toBe(false);
    const r = await call("GET", `/jobs/${jobs[0].id}/result?format=url`);
    expect((await fetch(r.json.url)).status).toBe(200);
    await expectNoOrphanObjects();
  }, 300_000);

  test("a worker SIGKILLed mid-job: the other worker (or its restart) retries it once; it succeeds, billed once", async () => {
    const sandbox = await api.newKey();
    const live = await keyFor(api, sandbox.accountId, "live");
    const f = (await uploadBytes(api, live.key, tinyPdf(8), "eight.pdf", "application/pdf")).json;
    const job = await createJob(api, live.key, { operation: "compress", file_id: f.id });
    const row = await waitJobRow(api, job.id, ["running"], 30_000, (r) => r.attempts === 1);
    await Bun.sleep(pageDelayMs * 2);
    const pid = workerPidOf(row.worker_id);
    process.kill(pid, "SIGKILL");
    await waitFor(`worker ${pid} to die`, () => !isAlive(pid), 5_000);
    const done = await finishedJob(api, live.key, job.id, 60_000);
    expect(done.status).toBe("succeeded");
    expect(done.attempts).toBe(2);
    const ledger = await api.sql`SELECT entry, credits FROM credit_ledger WHERE job_id = ${job.id} ORDER BY created_at`;
    expect(ledger.map((l) => l.entry).filter((e) => e === "reserve").length).toBe(1);
    expect(ledger.filter((l) => l.entry === "charge").map((l) => l.credits)).toEqual([8]);
    const [final] = await api.sql`SELECT result FROM jobs WHERE id = ${job.id}`;
    expect(final!.result.storage_key).toContain(`/${job.id}/2/`);
    expect((await download(api, live.key, job.id)).status).toBe(200);
    await expectNoOrphanObjects();
  }, 120_000);

  test("the API SIGKILLed mid-upload: no file row, no object; the restarted API serves again", async () => {
    const { key } = await api.newKey();
    const [apiPid] = await rolePids(api, "api");
    expect(apiPid).toBeGreaterThan(0);
    const boundary = "kill-b";
    const head = new TextEncoder().encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="half.pdf"\r\nContent-Type: application/pdf\r\n\r\n%PDF-1.7\n`,
    );
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 0) c.enqueue(head);
        await Bun.sleep(20);
        c.enqueue(new Uint8Array(16 * 1024).fill(0x20));
        sent += 16 * 1024;
      },
    });
    const upload = fetch(`${api.baseUrl}/files`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
    }).then(
      (r) => r.status,
      () => "aborted",
    );
    await waitFor("some of the upload to arrive", () => sent > 256 * 1024, 20_000);
    process.kill(apiPid!, "SIGKILL");
    expect(await upload).toBe("aborted");
    await waitFor(
      "the supervisor to restart the API",
      async () =>
        (await rolePids(api, "api")).some((p) => p !== apiPid) &&
        (await fetch(`${api.origin}/healthz`).then(
          (r) => r.status === 200,
          () => false,
        )),
      30_000,
      200,
    );
    const [{ n }] = (await api.sql`SELECT count(*)::int AS n FROM files WHERE filename = 'half.pdf'`) as any;
    expect(n).toBe(0);
    await expectNoOrphanObjects();
    expect((await client(api.baseUrl, key)("GET", "/account")).status).toBe(200);
  }, 90_000);
});
