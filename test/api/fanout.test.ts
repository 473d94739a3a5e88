// Issue 39, points 1-3 on one host with two worker processes: an OCR job of more pages than one
// task is split into page-range tasks that both workers run; the job's promises hold for the
// job as a whole: its blocks are the pages whole runs read, progress is the sum of its tasks'
// pages, credits settle once at fan-in, one event (one webhook), partial results are deleted;
// cancel stops every task; a failed task fails the job with its error; a task whose worker is
// SIGKILLed is retried alone; a job of fewer pages than one task runs whole, as before; convert
// pdf -> jpg and redact are split the same way; JOB_TIMEOUT_S counts over the whole job.
// JOB_TEST_PAGE_DELAY_MS slows each task's pages so that the tests can act while tasks run.
// The multi-host test is fanout-hosts.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { client, hasCorpus, type Service, startService } from "../support/service";
import {
  createJob,
  download,
  eventsFor,
  finishedJob,
  keyFor,
  makePdf,
  npages,
  pageText,
  qpdfCheck,
  rolePids,
  run,
  tempDir,
  uploadOk,
  workerPidOf,
} from "../support/jobs";
import { isAlive, waitFor } from "../support/wait";

const qpdf = run(["qpdf", "--version"]).code === 0;
const ready = hasCorpus && qpdf;
if (!ready) console.log("skipping page-parallel job tests: needs the corpus and qpdf");

const pageDelayMs = 250;
let svc: Service;
let tmp: ReturnType<typeof tempDir>;
let twelve = "";

beforeAll(async () => {
  if (!ready) return;
  svc = await startService({
    workers: 2,
    env: {
      JOB_LEASE_S: "2",
      QUEUE_POLL_MS: "300",
      SWEEP_INTERVAL_S: "2",
      JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs),
      OCR_THREADS: "1",
    },
  });
  tmp = tempDir();
  // Twelve scanned pages: three tasks of four pages with two live workers.
  twelve = makePdf(tmp.dir, "twelve.pdf", [
    { file: "scanned-multipage-assembly.pdf" },
    { file: "scanned-multipage-assembly.pdf" },
  ]);
}, 60_000);
afterAll(async () => {
  await svc?.stop();
  tmp?.cleanup();
}, 60_000);

async function liveKey() {
  const sandbox = await svc.newKey();
  return { ...(await keyFor(svc, sandbox.accountId, "live")), accountId: sandbox.accountId };
}

const tasksOf = (jobId: string) => svc.sql`SELECT * FROM job_tasks WHERE job_id = ${jobId} ORDER BY seq`;

async function ledger(jobId: string) {
  return svc.sql`SELECT entry, credits, pages FROM credit_ledger WHERE job_id = ${jobId} ORDER BY id`;
}

/** Partial results (files) left on the disk store under the job's results. */
function partialsOnDisk(jobId: string): string[] {
  const dir = join(svc.dataDir, "blobs/results", jobId.slice(0, 2), jobId, "tasks");
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map(String)
    .filter((f) => statSync(join(dir, f)).isFile());
}

describe.skipIf(!ready)("page-parallel jobs", () => {
  test("a 12-page OCR job is split into tasks run by both workers; its blocks are the pages of whole runs, billed and announced once", async () => {
    const { key } = await liveKey();
    const file = await uploadOk(svc, key, twelve);
    expect(file.page_count).toBe(12);
    const job = await createJob(svc, key, { operation: "ocr", file_id: file.id, options: { output: "blocks" } });
    // Progress while it runs is the sum of the tasks' pages, never above the job's pages.
    const seen = new Set<number>();
    let apiProgress: any = null;
    await waitFor(
      "the job to finish",
      async () => {
        const [r] = await svc.sql`SELECT status, progress_done, progress_total FROM jobs WHERE id = ${job.id}`;
        if (r!.status === "running" && r!.progress_total) {
          expect(r!.progress_total).toBe(12);
          expect(r!.progress_done).toBeLessThanOrEqual(12);
          seen.add(r!.progress_done);
          if (r!.progress_done > 0 && !apiProgress)
            apiProgress = (await client(svc.baseUrl, key)("GET", `/jobs/${job.id}`)).json.progress;
        }
        return ["succeeded", "failed", "cancelled"].includes(r!.status);
      },
      240_000,
      100,
    );
    const done = await finishedJob(svc, key, job.id);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });
    expect(done.progress).toMatchObject({ pages_done: 12, pages_total: 12 });
    expect([...seen].some((n) => n > 0 && n < 12)).toBe(true);
    expect(apiProgress.pages_total).toBe(12);
    expect(apiProgress.pages_done).toBeGreaterThan(0);

    // The assembling worker deletes the partial results just after the job succeeds.
    await waitFor("the partial results to be deleted", async () =>
      (await tasksOf(job.id)).every((t) => t.partial_key === null),
    );
    const tasks = await tasksOf(job.id);
    expect(tasks.map((t) => t.pages)).toEqual([
      [0, 1, 2, 3],
      [4, 5, 6, 7],
      [8, 9, 10, 11],
    ]);
    expect(tasks.every((t) => t.status === "done" && t.attempts === 1 && t.partial_key === null)).toBe(true);
    expect(new Set(tasks.map((t) => workerPidOf(t.worker_id))).size).toBe(2);
    const [row] = await svc.sql`SELECT tasks_total, tasks_done, pages_processed FROM jobs WHERE id = ${job.id}`;
    expect(row).toEqual({ tasks_total: 3, tasks_done: 3, pages_processed: 12 });

    const result = (await download(svc, key, job.id, "?format=json")).json;
    expect(result.pages.map((p: any) => p.page)).toEqual([...Array(12).keys()]);
    // The same pages read by a job of fewer pages than one task (run whole, as before).
    const whole = await createJob(svc, key, {
      operation: "ocr",
      file_id: file.id,
      options: { output: "blocks", pages: [4, 5, 6, 7] },
    });
    expect((await finishedJob(svc, key, whole.id, 120_000)).status).toBe("succeeded");
    const [wholeRow] = await svc.sql`SELECT tasks_total FROM jobs WHERE id = ${whole.id}`;
    expect(wholeRow!.tasks_total).toBeNull();
    expect((await tasksOf(whole.id)).length).toBe(0);
    const wholeResult = (await download(svc, key, whole.id, "?format=json")).json;
    expect(result.pages.slice(4, 8)).toEqual(wholeResult.pages);
    expect({ ...result, pages: [] }).toEqual({ ...wholeResult, pages: [] });

    expect((await ledger(job.id)).map((l) => [l.entry, l.credits])).toEqual([
      ["reserve", 36],
      ["release", 36],
      ["charge", 36],
    ]);
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
    expect(partialsOnDisk(job.id)).toEqual([]);

    const metrics = await (await fetch(`${svc.origin}/metrics`)).text();
    expect(metrics).toContain('docproc_task_duration_seconds_count{operation="ocr"} 3');
    expect(metrics).toContain('docproc_tasks_queued{operation="ocr"} 0');
    expect(metrics).toContain('docproc_tasks_running{operation="ocr"} 0');
  }, 300_000);

  test("convert pdf -> jpg of 70 pages is split into two tasks; the ZIP holds every page in order, billed once", async () => {
    const { key } = await liveKey();
    const seventy = makePdf(tmp.dir, "seventy.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-70" }]);
    const file = await uploadOk(svc, key, seventy);
    const job = await createJob(svc, key, {
      operation: "convert",
      file_id: file.id,
      options: { target: "jpg", dpi: 40 },
    });
    const done = await finishedJob(svc, key, job.id, 240_000);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });
    expect((await tasksOf(job.id)).map((t) => [t.pages.length, t.status])).toEqual([
      [35, "done"],
      [35, "done"],
    ]);
    const zip = (await download(svc, key, job.id)).bytes;
    expect(zip.length).toBe(done.result.bytes);
    // The end-of-central-directory record: the number of entries, then their names in order.
    const text = Buffer.from(zip).toString("latin1");
    const eocd = text.lastIndexOf("PK\x05\x06");
    expect(Buffer.from(zip).readUInt16LE(eocd + 10)).toBe(70);
    const names = [...text.slice(Buffer.from(zip).readUInt32LE(eocd + 16)).matchAll(/page-\d{4}\.jpg/g)].map(
      (m) => m[0],
    );
    expect(names).toEqual(Array.from({ length: 70 }, (_, i) => `page-${String(i + 1).padStart(4, "0")}.jpg`));
    expect((await ledger(job.id)).map((l) => [l.entry, l.pages])).toEqual([
      ["reserve", 70],
      ["release", 70],
      ["charge", 70],
    ]);
  }, 300_000);

  test("a redaction of 34 pages is split into two tasks; every redacted page is rebuilt, billed once", async () => {
    const { key } = await liveKey();
    const seventy = makePdf(tmp.dir, "seventy-r.pdf", [{ file: "geotopo-117-pages.pdf", range: "1-70" }]);
    const file = await uploadOk(svc, key, seventy);
    const regions = Array.from({ length: 34 }, (_, i) => ({ page: i * 2, x: 10, y: 10, w: 100, h: 40 }));
    const job = await createJob(svc, key, { operation: "redact", file_id: file.id, options: { regions } });
    const done = await finishedJob(svc, key, job.id, 240_000);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });
    expect((await tasksOf(job.id)).map((t) => [t.pages, t.status])).toEqual([
      [regions.slice(0, 17).map((r) => r.page), "done"],
      [regions.slice(17).map((r) => r.page), "done"],
    ]);
    expect(done.result.pages_processed).toBe(34);
    const out = join(tmp.dir, "redacted.pdf");
    await Bun.write(out, (await download(svc, key, job.id)).bytes);
    expect(qpdfCheck(out).code).toBe(0);
    expect(npages(out)).toBe(70);
    // A rebuilt page is one image: no text is left on it; the pages between keep theirs.
    expect(pageText(out, 1)).toBe("");
    expect(pageText(out, 2)).not.toBe("");
    expect((await ledger(job.id)).map((l) => [l.entry, l.pages])).toEqual([
      ["reserve", 34],
      ["release", 34],
      ["charge", 34],
    ]);
  }, 300_000);

  test("a task that fails fails the job with its error (the whole job's code); no task is left to run, nothing charged, one job.failed", async () => {
    const { key } = await liveKey();
    // Nine pages, the sixth a content stream no engine reads (JBIG2 as page content): two tasks.
    const nine = makePdf(tmp.dir, "nine.pdf", [
      { file: "scanned-multipage-assembly.pdf", range: "1-3,5-6" },
      { file: "decompression-bomb.pdf" },
      { file: "scanned-multipage-assembly.pdf", range: "1-3" },
    ]);
    const file = await uploadOk(svc, key, nine);
    expect(file.page_count).toBe(9);
    const job = await createJob(svc, key, { operation: "ocr", file_id: file.id, options: { output: "blocks" } });
    const done = await finishedJob(svc, key, job.id, 240_000);
    expect(done.status).toBe("failed");
    expect(done.error.code).toBe("file_unreadable");
    expect(done.error.message).toContain("page 6");
    const tasks = await tasksOf(job.id);
    expect(tasks.map((t) => t.pages.length)).toEqual([5, 4]);
    expect(tasks[1]!.status).toBe("failed");
    expect(tasks.filter((t) => ["queued", "running"].includes(t.status))).toEqual([]);
    expect((await ledger(job.id)).map((l) => l.entry)).toEqual(["reserve", "release"]);
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.failed"]);
  }, 300_000);

  test("cancel stops every task: none runs on, none is queued, credits are released, one job.cancelled, partials swept", async () => {
    const { key } = await liveKey();
    const file = await uploadOk(svc, key, twelve);
    const job = await createJob(svc, key, { operation: "searchable_pdf", file_id: file.id });
    await waitFor(
      "a task done and one running",
      async () => {
        const tasks = await tasksOf(job.id);
        return tasks.some((t) => t.status === "done") && tasks.some((t) => t.status === "running");
      },
      120_000,
    );
    const r = await client(svc.baseUrl, key)("POST", `/jobs/${job.id}/cancel`);
    expect(r.json.status).toBe("cancelled");
    const tasks = await tasksOf(job.id);
    expect(tasks.filter((t) => ["queued", "running"].includes(t.status))).toEqual([]);
    // The workers stop at their next checkpoint: nothing finishes after the cancel.
    await Bun.sleep(pageDelayMs * 8);
    expect((await tasksOf(job.id)).filter((t) => t.status === "done").length).toBe(
      tasks.filter((t) => t.status === "done").length,
    );
    expect((await ledger(job.id)).map((l) => l.entry)).toEqual(["reserve", "release"]);
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.cancelled"]);
    // The partial results of the tasks that finished are swept (SWEEP_INTERVAL_S=2).
    await waitFor(
      "the sweeper to delete the partial results",
      async () => (await tasksOf(job.id)).every((t) => t.partial_key === null) && partialsOnDisk(job.id).length === 0,
      20_000,
      200,
    );
    // The workers take new work again.
    const next = await createJob(svc, key, { operation: "ocr", file_id: file.id, options: { pages: [0] } });
    expect((await finishedJob(svc, key, next.id, 60_000)).status).toBe("succeeded");
  }, 180_000);

  test("a task whose worker is SIGKILLed is retried alone; the job succeeds once, billed once", async () => {
    const { key } = await liveKey();
    const file = await uploadOk(svc, key, twelve);
    const job = await createJob(svc, key, { operation: "ocr", file_id: file.id, options: { output: "blocks" } });
    const victim = await waitFor(
      "a task mid-run",
      async () => (await tasksOf(job.id)).find((t) => t.status === "running" && t.seq === 1),
      60_000,
    );
    await Bun.sleep(pageDelayMs * 2);
    const pid = workerPidOf(victim.worker_id);
    expect(await rolePids(svc, "worker")).toContain(pid);
    process.kill(pid, "SIGKILL");
    await waitFor(`worker ${pid} to die`, () => !isAlive(pid), 5_000);
    const done = await finishedJob(svc, key, job.id, 240_000);
    expect({ status: done.status, error: done.error ?? null }).toEqual({ status: "succeeded", error: null });
    const tasks = await tasksOf(job.id);
    expect(tasks.map((t) => [t.seq, t.status, t.attempts])).toEqual([
      [0, "done", 1],
      [1, "done", 2],
      [2, "done", 1],
    ]);
    expect(done.attempts).toBe(1);
    expect(done.progress).toMatchObject({ pages_done: 12, pages_total: 12 });
    expect((await ledger(job.id)).map((l) => [l.entry, l.credits])).toEqual([
      ["reserve", 36],
      ["release", 36],
      ["charge", 36],
    ]);
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
    expect((await download(svc, key, job.id, "?format=json")).json.pages.length).toBe(12);
  }, 300_000);
});

describe.skipIf(!ready)("JOB_TIMEOUT_S over a page-parallel job", () => {
  let slow: Service;
  beforeAll(async () => {
    slow = await startService({
      workers: 2,
      env: { JOB_LEASE_S: "2", QUEUE_POLL_MS: "300", JOB_TIMEOUT_S: "4", JOB_TEST_PAGE_DELAY_MS: "1500" },
    });
  }, 60_000);
  afterAll(async () => {
    await slow?.stop();
  }, 60_000);

  test("counts from the job's first start over all its tasks: the job fails with job_timeout, no task runs on, nothing charged", async () => {
    const sandbox = await slow.newKey();
    const { key } = await keyFor(slow, sandbox.accountId, "live");
    const file = await uploadOk(slow, key, twelve);
    // Three tasks of four pages, each longer than the limit (4 x 1.5 s before its OCR).
    const job = await createJob(slow, key, { operation: "ocr", file_id: file.id, options: { output: "blocks" } });
    const done = await finishedJob(slow, key, job.id, 60_000);
    expect(done.status).toBe("failed");
    expect(done.error.code).toBe("job_timeout");
    expect(Date.parse(done.finished_at) - Date.parse(done.started_at)).toBeLessThan(15_000);
    const tasks = await slow.sql`SELECT status FROM job_tasks WHERE job_id = ${job.id}`;
    expect(tasks.length).toBe(3);
    expect(tasks.filter((t) => ["queued", "running", "done"].includes(t.status))).toEqual([]);
    const ledger = await slow.sql`SELECT entry FROM credit_ledger WHERE job_id = ${job.id} ORDER BY id`;
    expect(ledger.map((l) => l.entry)).toEqual(["reserve", "release"]);
    expect((await eventsFor(slow, job.id)).map((e) => e.type)).toEqual(["job.failed"]);
  }, 120_000);
});
