// The API spec (docs/api.md), States and transitions (cancel queued / running), Jobs "Result rules" and Events;
// issue 3, points 2 and 7: POST /jobs/{id}/cancel on a queued job (cancelled at once, never
// runs) and on a running one (stops at its next checkpoint, no result); the result endpoint's
// rules (409 job_not_finished, 409 no_downloadable_result, 404 result_expired, 501 for
// format=url, format=json metadata, X-Service-Sandbox on sandbox downloads only); and exactly
// one event row per final transition, of the right type, with the full envelope.
//
// One worker and JOB_TEST_PAGE_DELAY_MS (a per-page wait before a job runs) make jobs slow
// enough to be cancelled while queued behind another job, or while running.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { client, expectEnvelope, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import {
  createJob,
  download,
  eventsFor,
  finalStatuses,
  finishedJob,
  keyFor,
  tempDir,
  uploadMadePdfOk,
  uploadOk,
  waitJobRow,
  writeTemp,
} from "../support/jobs";
import { makePdf as makeBlankPdf } from "../support/make-pdf";

const pageDelayMs = 250;
const svc = useService({ workers: 1, env: { JOB_TEST_PAGE_DELAY_MS: String(pageDelayMs) } }, 60_000);
let tmp: ReturnType<typeof tempDir>;
let slowPdf: string; // 20 pages = 5 s of test delay

beforeAll(async () => {
  tmp = tempDir();
  slowPdf = writeTemp(tmp.dir, "slow-20.pdf", makeBlankPdf(20));
}, 60_000);
afterAll(async () => {
  tmp?.cleanup();
}, 60_000);

function resultDir(jobId: string) {
  return join(svc.dataDir, "blobs", "results", jobId.slice(0, 2), jobId);
}

describe("cancel", () => {
  let key: string;
  let call: ReturnType<typeof client>;
  let slow: any;
  let small: any;
  let running: any; // the slow job, running
  let queued: any; // a job queued behind it

  beforeAll(async () => {
    ({ key } = await svc.newKey());
    call = client(svc.baseUrl, key);
    slow = await uploadOk(svc, key, slowPdf);
    small = await uploadMadePdfOk(svc, key, 1);
    running = await createJob(svc, key, { operation: "rotate", file_id: slow.id, options: { degrees: 90 } });
    await waitJobRow(svc, running.id, ["running"], 10_000);
    queued = await createJob(svc, key, { operation: "rotate", file_id: small.id, options: { degrees: 90 } });
  }, 60_000);

  test("while running: status running, started_at, attempts 1, progress in pages done out of pages to do", async () => {
    const j = (await call("GET", `/jobs/${running.id}`)).json;
    expect(j.status).toBe("running");
    expect(j.attempts).toBe(1);
    expect(j.started_at).not.toBeNull();
    expect(j.finished_at).toBeNull();
    expect(j.progress.pages_total).toBe(20);
    expect(j.progress.pages_done).toBeGreaterThanOrEqual(0);
    expect(j.progress.pages_done).toBeLessThanOrEqual(20);
    expect(j.progress.percent).toBeGreaterThanOrEqual(0);
    expect(j.progress.percent).toBeLessThanOrEqual(100);
    expect(j.result).toBeNull();
  }, 60_000);

  test("the result of a queued or running job: 409 job_not_finished", async () => {
    expect(expectEnvelope(await call("GET", `/jobs/${running.id}/result`), 409, "job_not_finished").type).toBe(
      "conflict_error",
    );
    expectEnvelope(await call("GET", `/jobs/${queued.id}/result`), 409, "job_not_finished");
    expectEnvelope(await call("GET", `/jobs/${queued.id}/result?format=json`), 409, "job_not_finished");
  }, 60_000);

  test("GET /jobs?status=queued and status=running find them", async () => {
    expect((await call("GET", "/jobs?status=queued")).json.data.map((j: any) => j.id)).toEqual([queued.id]);
    expect((await call("GET", "/jobs?status=running")).json.data.map((j: any) => j.id)).toEqual([running.id]);
  }, 60_000);

  test("cancelling a queued job: cancelled at once, with one job.cancelled event; it never runs", async () => {
    const r = await call("POST", `/jobs/${queued.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: queued.id, object: "job", status: "cancelled", result: null, error: null });
    expect(r.json.finished_at).not.toBeNull();
    const [row] = await svc.sql`SELECT status, attempts, started_at, worker_id FROM jobs WHERE id = ${queued.id}`;
    expect(row).toEqual({ status: "cancelled", attempts: 0, started_at: null, worker_id: null });
    const ev = await eventsFor(svc, queued.id);
    expect(ev.map((e) => e.type)).toEqual(["job.cancelled"]);
    expect(ev[0].payload.data.object.status).toBe("cancelled");
  }, 60_000);

  test("cancelling a running job: cancelled at once; the worker stops at its next checkpoint and leaves no result", async () => {
    const started = Date.now();
    const r = await call("POST", `/jobs/${running.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe("cancelled");
    // The worker is free again long before the 5 s the job would still have needed: a new job
    // on the single worker finishes promptly.
    const next = await createJob(svc, key, { operation: "rotate", file_id: small.id, options: { degrees: 90 } });
    const done = await finishedJob(svc, key, next.id, 10_000);
    expect(done.status).toBe("succeeded");
    expect(Date.now() - started).toBeLessThan(3_500);
    const j = (await call("GET", `/jobs/${running.id}`)).json;
    expect(j.status).toBe("cancelled");
    expect(j.result).toBeNull();
    expect(existsSync(resultDir(running.id))).toBe(false);
    expectEnvelope(await call("GET", `/jobs/${running.id}/result`), 409, "job_not_finished");
    expect((await eventsFor(svc, running.id)).map((e) => e.type)).toEqual(["job.cancelled"]);
  }, 60_000);

  test("cancelling a finished job answers 200 with the job unchanged and records nothing", async () => {
    const r = await call("POST", `/jobs/${queued.id}/cancel`);
    expect(r.status).toBe(200);
    expect(r.json.status).toBe("cancelled");
    const [done] = await svc.sql`SELECT id FROM jobs WHERE file_ids[1] = ${small.id} AND status = 'succeeded' LIMIT 1`;
    const s = await call("POST", `/jobs/${done!.id}/cancel`);
    expect(s.status).toBe(200);
    expect(s.json.status).toBe("succeeded");
    expect((await eventsFor(svc, done!.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
    expect((await eventsFor(svc, queued.id)).length).toBe(1);
  }, 60_000);

  test("cancel of an unknown job: 404; malformed id: 422", async () => {
    expectEnvelope(await call("POST", `/jobs/${randomUUID()}/cancel`), 404, "not_found");
    expectEnvelope(await call("POST", "/jobs/xyz/cancel"), 422, "validation_error");
  }, 60_000);
});

describe("result rules", () => {
  let key: string;
  let call: ReturnType<typeof client>;
  let done: any;

  beforeAll(async () => {
    const k = await svc.newKey();
    key = k.key;
    call = client(svc.baseUrl, key);
    const f = await uploadMadePdfOk(svc, key, 1);
    done = await finishedJob(
      svc,
      key,
      (await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } })).id,
    );
    expect(done.status).toBe("succeeded");
  }, 60_000);

  test("format=download (the default) streams the bytes as application/octet-stream with X-Service-Sandbox: true", async () => {
    for (const q of ["", "?format=download"]) {
      const d = await download(svc, key, done.id, q);
      expect(d.status).toBe(200);
      expect(d.headers.get("content-type")).toBe("application/octet-stream");
      expect(d.headers.get("x-service-sandbox")).toBe("true");
      expect(new TextDecoder().decode(d.bytes.subarray(0, 5))).toBe("%PDF-");
      expect(d.bytes.length).toBe(done.result.bytes);
    }
  }, 60_000);

  test("format=json, or Accept: application/json, returns the result's metadata as JSON", async () => {
    const r = await call("GET", `/jobs/${done.id}/result?format=json`);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(r.json).toMatchObject({
      job_id: done.id,
      type: "file",
      filename: done.result.filename,
      content_type: "application/pdf",
      bytes: done.result.bytes,
      pages_processed: 1,
      download_url: done.result.download_url,
    });
    const viaAccept = await call("GET", `/jobs/${done.id}/result`, undefined, { accept: "application/json" });
    expect(viaAccept.status).toBe(200);
    expect(viaAccept.json).toEqual(r.json);
  }, 60_000);

  test("format=url: 501 presigned_unavailable without an object store", async () => {
    const e = expectEnvelope(await call("GET", `/jobs/${done.id}/result?format=url`), 501, "presigned_unavailable");
    expect(e.type).toBe("invalid_request_error");
  }, 60_000);

  test("an unknown format: 422 validation_error on param format", async () => {
    expect(expectEnvelope(await call("GET", `/jobs/${done.id}/result?format=pdf`), 422, "validation_error").param).toBe(
      "format",
    );
  }, 60_000);

  test.skipIf(!hasCorpus)(
    "a failed job's result: 409 job_not_finished",
    async () => {
      const f = await uploadOk(svc, key, "encrypted-libreoffice-rc4.pdf");
      const failed = await finishedJob(
        svc,
        key,
        (await createJob(svc, key, { operation: "unlock", file_id: f.id, options: { password: "nope" } })).id,
      );
      expect(failed.status).toBe("failed");
      expectEnvelope(await call("GET", `/jobs/${failed.id}/result`), 409, "job_not_finished");
    },
    60_000,
  );

  test("a JSON-only result asked for as a download: 409 no_downloadable_result; format=json returns it", async () => {
    const k = await svc.newKey();
    const id = randomUUID();
    await svc.sql`INSERT INTO jobs (id, account_id, key_id, mode, operation, kind, status, file_ids, options, metadata, pages_estimated, credits_per_page,
                                    pages_processed, result, result_expires_at, started_at, finished_at)
                  VALUES (${id}, ${k.accountId}, ${k.keyId}, 'test', 'ocr', 'ocr', 'succeeded', ARRAY[${randomUUID()}]::uuid[], '{"output":"blocks"}', '{"synthetic":"1"}', 1, 0,
                          1, ${svc.sql.json({ type: "json", json: { object: "ocr_result", pages: [{ index: 0, blocks: [] }] } })}, now() + interval '1 hour', now(), now())`;
    const c = client(svc.baseUrl, k.key);
    expect(expectEnvelope(await c("GET", `/jobs/${id}/result`), 409, "no_downloadable_result").type).toBe(
      "conflict_error",
    );
    const j = await c("GET", `/jobs/${id}/result?format=json`);
    expect(j.status).toBe(200);
    expect(j.json).toEqual({ object: "ocr_result", pages: [{ index: 0, blocks: [] }] });
  }, 60_000);

  test("live downloads do not carry X-Service-Sandbox", async () => {
    const sandbox = await svc.newKey({ mode: "test" });
    const live = await keyFor(svc, sandbox.accountId, "live");
    const f = await uploadMadePdfOk(svc, live.key, 1);
    const job = await finishedJob(
      svc,
      live.key,
      (await createJob(svc, live.key, { operation: "rotate", file_id: f.id, options: { degrees: 270 } })).id,
    );
    expect(job.status).toBe("succeeded");
    expect(job.sandbox).toBe(false);
    expect(job.livemode).toBe(true);
    expect(job.credits.billed).toBe(false);
    const d = await download(svc, live.key, job.id);
    expect(d.status).toBe(200);
    expect(d.headers.get("x-service-sandbox")).toBeNull();
    expect((await eventsFor(svc, job.id))[0].payload.livemode).toBe(true);
  }, 60_000);

  test("after the result's time-to-live: 404 result_expired, in every format", async () => {
    await svc.sql`UPDATE jobs SET result_expires_at = now() - interval '1 second' WHERE id = ${done.id}`;
    expect(expectEnvelope(await call("GET", `/jobs/${done.id}/result`), 404, "result_expired").type).toBe(
      "not_found_error",
    );
    expectEnvelope(await call("GET", `/jobs/${done.id}/result?format=json`), 404, "result_expired");
    // The job itself is still there.
    expect((await call("GET", `/jobs/${done.id}`)).json.status).toBe("succeeded");
  }, 60_000);
});

describe("events", () => {
  test.skipIf(!hasCorpus)(
    "every final transition wrote exactly one event of its type, with the full envelope; other jobs none",
    async () => {
      // Let any job still in flight finish first.
      for (const { id } of await svc.sql`SELECT id FROM jobs WHERE status IN ('queued', 'running')`)
        await waitJobRow(svc, id, finalStatuses, 20_000);
      const jobs =
        await svc.sql`SELECT id, status, mode, account_id, error FROM jobs WHERE NOT (metadata ? 'synthetic')`;
      expect(jobs.length).toBeGreaterThan(5);
      const seenTypes = new Set<string>();
      for (const job of jobs) {
        const ev = await eventsFor(svc, job.id);
        expect({ job: job.id, types: ev.map((e) => e.type) }).toEqual({ job: job.id, types: [`job.${job.status}`] });
        const e = ev[0];
        seenTypes.add(e.type);
        expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
        expect(e.mode).toBe(job.mode);
        expect(e.account_id).toBe(job.account_id);
        const p = e.payload;
        expect(Object.keys(p).sort()).toEqual([
          "api_version",
          "created_at",
          "data",
          "id",
          "livemode",
          "object",
          "type",
        ]);
        expect(p).toMatchObject({
          id: e.id,
          object: "event",
          type: e.type,
          api_version: "2026-09-01",
          livemode: job.mode === "live",
        });
        expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
        expect(p.data.object).toMatchObject({ id: job.id, object: "job", status: job.status });
        if (job.status === "failed") expect(p.data.object.error.code).toBe(job.error.code);
        if (job.status === "succeeded") expect(p.data.object.result.download_url).toEndWith(`/jobs/${job.id}/result`);
      }
      expect([...seenTypes].sort()).toEqual(["job.cancelled", "job.failed", "job.succeeded"]);
    },
    60_000,
  );
});
