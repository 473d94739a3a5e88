// The API spec (docs/api.md), File states (the sweeper deletes a file at expires_at and emits file.expired),
// Result rules (404 result_expired after the result's time-to-live), Events and Limits (data
// lifetime); issue 3, points 1, 2 and 7. FILE_TTL_S=2 and SWEEP_INTERVAL_S=1 make files and
// results expire within seconds.
import { describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { waitFor } from "../support/wait";
import { createJob, download, eventsFor, finishedJob, keyFor, uploadMadePdfOk } from "../support/jobs";

const svc = useService({ workers: 1, env: { FILE_TTL_S: "2", SWEEP_INTERVAL_S: "1" } }, 60_000);

async function storageKey(fileId: string): Promise<string> {
  return (await svc.sql`SELECT storage_key FROM files WHERE id = ${fileId}`)[0]!.storage_key;
}

describe("file expiry", () => {
  test("expires_at = created_at + FILE_TTL_S", async () => {
    const { key } = await svc.newKey();
    const f = await uploadMadePdfOk(svc, key, 1);
    expect(Date.parse(f.expires_at) - Date.parse(f.created_at)).toBe(2_000);
  }, 60_000);

  test("the sweeper deletes an expired file (404 afterwards, blob gone) and records one file.expired event", async () => {
    const { key, accountId } = await svc.newKey();
    const call = client(svc.baseUrl, key);
    const f = await uploadMadePdfOk(svc, key, 4);
    const blob = join(svc.dataDir, "blobs", await storageKey(f.id));
    expect(existsSync(blob)).toBe(true);
    await waitFor(
      "the sweeper to expire the file",
      async () => (await svc.sql`SELECT status FROM files WHERE id = ${f.id}`)[0]!.status === "expired",
      10_000,
    );
    // Rows first, then bytes (see the sweeper): the blob may outlive the status by a moment.
    await waitFor("the file's bytes to be removed from disk", () => !existsSync(blob), 5_000);
    expectEnvelope(await call("GET", `/files/${f.id}`), 404, "not_found");
    expectEnvelope(await call("DELETE", `/files/${f.id}`), 404, "not_found");
    expect((await call("GET", "/files")).json.data).toEqual([]);
    expect(
      expectEnvelope(
        await call("POST", "/jobs", { operation: "rotate", file_id: f.id, options: { degrees: 90 } }),
        404,
        "not_found",
      ).param,
    ).toBe("file_id");

    const ev = await eventsFor(svc, f.id);
    expect(ev.map((e) => e.type)).toEqual(["file.expired"]);
    const e = ev[0];
    expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(e.account_id).toBe(accountId);
    expect(e.mode).toBe("test");
    expect(e.payload).toMatchObject({
      id: e.id,
      object: "event",
      type: "file.expired",
      api_version: "2026-09-01",
      livemode: false,
    });
    expect(e.payload.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    expect(e.payload.data.object).toMatchObject({
      id: f.id,
      object: "file",
      filename: "made-4-pages.pdf",
      page_count: 4,
      status: "expired",
    });
    // Later sweeps do not record it again.
    await Bun.sleep(1_500);
    expect((await eventsFor(svc, f.id)).length).toBe(1);
  }, 60_000);

  test("a live file's file.expired event has livemode true", async () => {
    const { accountId } = await svc.newKey();
    const live = await keyFor(svc, accountId, "live");
    const f = await uploadMadePdfOk(svc, live.key, 1);
    const ev = await waitFor(
      "file.expired for the live file",
      async () => {
        const rows = await eventsFor(svc, f.id);
        return rows.length ? rows : undefined;
      },
      10_000,
    );
    expect(ev.map((e: any) => e.type)).toEqual(["file.expired"]);
    expect(ev[0].payload.livemode).toBe(true);
    expect(ev[0].mode).toBe("live");
  }, 60_000);

  test("a file deleted before it expires is not reported as expired", async () => {
    const { key } = await svc.newKey();
    const f = await uploadMadePdfOk(svc, key, 1);
    expect((await client(svc.baseUrl, key)("DELETE", `/files/${f.id}`)).status).toBe(200);
    await Bun.sleep(3_500);
    expect(await eventsFor(svc, f.id)).toEqual([]);
    expect((await svc.sql`SELECT status FROM files WHERE id = ${f.id}`)[0]!.status).toBe("deleted");
  }, 60_000);
});

describe("result expiry", () => {
  test("a result is downloadable until its TTL, then 404 result_expired and removed from disk", async () => {
    const { key } = await svc.newKey();
    const call = client(svc.baseUrl, key);
    const f = await uploadMadePdfOk(svc, key, 1);
    const job = await finishedJob(
      svc,
      key,
      (await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } })).id,
    );
    expect(job.status).toBe("succeeded");
    expect(Date.parse(job.result.expires_at) - Date.parse(job.finished_at)).toBeLessThanOrEqual(2_100);
    const first = await download(svc, key, job.id);
    expect(first.status).toBe(200);
    const [row] = await svc.sql`SELECT result FROM jobs WHERE id = ${job.id}`;
    const blob = join(svc.dataDir, "blobs", row!.result.storage_key);
    expect(existsSync(blob)).toBe(true);

    await waitFor("the result to expire", () => Date.now() > Date.parse(job.result.expires_at) + 50, 5_000);
    expect(expectEnvelope(await call("GET", `/jobs/${job.id}/result`), 404, "result_expired").type).toBe(
      "not_found_error",
    );
    await waitFor(
      "the sweeper to delete the result",
      async () =>
        (await svc.sql`SELECT result_deleted_at FROM jobs WHERE id = ${job.id}`)[0]!.result_deleted_at !== null,
      10_000,
    );
    // The sweeper marks the row first and then deletes the bytes (a failed delete leaves an
    // orphan the store sweep finds), so the file may outlive the mark by a moment.
    await waitFor("the result's bytes to be removed from disk", () => !existsSync(blob), 5_000);
    expectEnvelope(await call("GET", `/jobs/${job.id}/result?format=json`), 404, "result_expired");
    // The job record stays (succeeded), with its event.
    expect((await call("GET", `/jobs/${job.id}`)).json.status).toBe("succeeded");
    expect((await eventsFor(svc, job.id)).map((e) => e.type)).toEqual(["job.succeeded"]);
  }, 60_000);

  test("a job whose input expired before a worker ran it fails with not_found (a documented job-failure code)", async () => {
    const { key, keyId, accountId } = await svc.newKey();
    const f = await uploadMadePdfOk(svc, key, 1);
    // A job accepted while the file was ready, whose input the sweeper removed before it ran:
    // the job row goes straight into the queue with an already-expired input.
    await waitFor(
      "the input to expire",
      async () => (await svc.sql`SELECT status FROM files WHERE id = ${f.id}`)[0]!.status === "expired",
      10_000,
    );
    const [job] = await svc.sql`
      INSERT INTO jobs (account_id, key_id, mode, operation, kind, file_ids, options, pages_estimated, credits_per_page)
      VALUES (${accountId}, ${keyId}, 'test', 'rotate', 'page_ops', ARRAY[${f.id}]::uuid[], '{"degrees":90}', 1, 0) RETURNING id`;
    await svc.sql`SELECT pg_notify('jobs', ${job!.id})`;
    const done = await finishedJob(svc, key, job!.id);
    expect(done.status).toBe("failed");
    expect(done.error.code).toBe("not_found");
    const errors = (await client(svc.baseUrl)("GET", "/errors")).json;
    expect(JSON.stringify(errors)).toContain("not_found");
    expect((await eventsFor(svc, job!.id)).map((e) => e.type)).toEqual(["job.failed"]);
  }, 60_000);
});
