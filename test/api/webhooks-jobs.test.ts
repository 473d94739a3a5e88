// Webhooks end to end with real jobs and the real sweeper: the events recorded by the job
// lifecycle (job.succeeded, job.failed, job.cancelled) and by file expiry (file.expired) reach
// subscribed endpoints only, signed, with the spec's envelope and the job/file as data.object.
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { client, corpusDir, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import { startReceiver, verifyWithStripe } from "../support/webhook-receiver";

setDefaultTimeout(90_000);

// One worker and a per-page delay, so a second job stays queued long enough to cancel;
// short TTL and sweep so file.expired arrives within the test.
const svc = useService({
  workers: 1,
  env: { JOB_TEST_PAGE_DELAY_MS: "300", FILE_TTL_S: "6", SWEEP_INTERVAL_S: "1", WEBHOOK_RETRY_DELAYS_S: "1,1,1,1,1" },
});
const rx = startReceiver();

afterAll(async () => {
  rx.stop();
});

async function upload(api: ReturnType<typeof client>, name: string) {
  const fd = new FormData();
  fd.append("file", new Blob([readFileSync(join(corpusDir, "files", name))], { type: "application/pdf" }), name);
  const r = await api("POST", "/files", fd);
  expect(r.status).toBe(201);
  return r.json;
}

describe("events from the job lifecycle reach webhooks", () => {
  test.skipIf(!hasCorpus)(
    "job.succeeded, job.failed, job.cancelled and file.expired arrive signed, with the job or file as data.object, only where subscribed",
    async () => {
      const k = await svc.newKey({ mode: "test" });
      const api = client(svc.baseUrl, k.key);
      const all = await api("POST", "/webhooks", { url: rx.url("/all") });
      const onlyFailed = await api("POST", "/webhooks", { url: rx.url("/failed"), events: ["job.failed"] });
      expect(all.status).toBe(201);
      expect(onlyFailed.status).toBe(201);

      const pdf = await upload(api, "latex-outline-4-pages.pdf");
      const locked = await upload(api, "encrypted-libreoffice-rc4.pdf");
      const ok = await api("POST", "/jobs", {
        operation: "rotate",
        file_id: pdf.id,
        options: { degrees: 90 },
        metadata: { order: "42" },
      });
      const bad = await api("POST", "/jobs", {
        operation: "unlock",
        file_id: locked.id,
        options: { password: "wrong" },
      });
      expect(ok.status).toBe(202);
      expect(bad.status).toBe(202);
      // The first job holds the only worker for ~1.2 s; the second waits; cancel it while queued.
      await rx.waitFor(
        (h) => h.some((x) => x.path === "/all" && x.json?.data?.object?.id === ok.json.id),
        30_000,
        "job.succeeded",
      );
      const third = await api("POST", "/jobs", { operation: "rotate", file_id: pdf.id, options: { degrees: 180 } });
      expect(third.status).toBe(202);
      const cancel = await api("POST", `/jobs/${third.json.id}/cancel`);
      expect(cancel.status).toBe(200);
      expect(cancel.json.status).toBe("cancelled");

      await rx.waitFor(
        (h) =>
          ["job.succeeded", "job.failed", "job.cancelled", "file.expired"].every((t) =>
            h.some((x) => x.path === "/all" && x.json?.type === t),
          ),
        40_000,
        "all four event types",
      );
      const byType = (t: string) => rx.at("/all").filter((h) => h.json.type === t);

      const succeeded = byType("job.succeeded").find((h) => h.json.data.object.id === ok.json.id)!;
      expect(succeeded.json).toMatchObject({
        object: "event",
        type: "job.succeeded",
        api_version: "2026-09-01",
        livemode: false,
      });
      expect(succeeded.json.id).toMatch(/^evt_/);
      expect(Date.parse(succeeded.json.created_at)).toBeGreaterThan(0);
      expect(succeeded.json.data.object).toMatchObject({
        object: "job",
        id: ok.json.id,
        status: "succeeded",
        metadata: { order: "42" },
        sandbox: true,
      });
      expect(succeeded.json.data.object.result.pages_processed).toBe(4);
      expect(succeeded.headers["service-event"]).toBe("job.succeeded");
      expect(succeeded.headers["content-type"]).toContain("application/json");
      const verified = await verifyWithStripe(succeeded, all.json.secret);
      expect(verified.id).toBe(succeeded.json.id);

      const failed = byType("job.failed").find((h) => h.json.data.object.id === bad.json.id)!;
      expect(failed.json.data.object.status).toBe("failed");
      expect(failed.json.data.object.error.code).toBe("invalid_options");

      const cancelled = byType("job.cancelled").find((h) => h.json.data.object.id === third.json.id)!;
      expect(cancelled.json.data.object.status).toBe("cancelled");

      const expired = byType("file.expired");
      expect(expired.map((h) => h.json.data.object.id).sort()).toEqual([locked.id, pdf.id].sort());
      expect(expired[0]!.json.data.object).toMatchObject({ object: "file", status: "expired" });

      // The job.failed-only endpoint got exactly the failure, nothing else.
      await Bun.sleep(500);
      const onlyFailedHits = rx.at("/failed");
      expect(onlyFailedHits.map((h) => h.json.type)).toEqual(["job.failed"]);
      await verifyWithStripe(onlyFailedHits[0]!, onlyFailed.json.secret);
    },
  );
});

describe("delivery log retention", () => {
  test("the sweeper deletes finished delivery attempts older than 30 days and keeps recent and unfinished ones", async () => {
    const k = await svc.newKey({ mode: "test" });
    const api = client(svc.baseUrl, k.key);
    const ep = await api("POST", "/webhooks", { url: rx.url("/retention") });
    expect(ep.status).toBe(201);
    const id = ep.json.id as string;
    const endpointId = (await svc.sql`SELECT id FROM webhook_endpoints WHERE url = ${rx.url("/retention")}`)[0]!.id;
    // Rows written as the dispatcher leaves them; the pending one is not due for a day, so
    // no dispatcher touches it during the test.
    await svc.sql`
      INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, next_attempt_at, created_at)
      VALUES (${endpointId}, 'evt_old_ok', 'job.succeeded', 1, 'succeeded', NULL, now() - interval '31 days'),
             (${endpointId}, 'evt_old_failed', 'job.failed', 1, 'failed', NULL, now() - interval '45 days'),
             (${endpointId}, 'evt_old_pending', 'job.failed', 2, 'pending', now() + interval '1 day', now() - interval '31 days'),
             (${endpointId}, 'evt_recent', 'job.succeeded', 1, 'succeeded', NULL, now() - interval '29 days')`;
    const left = async () =>
      (await svc.sql`SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ${endpointId} ORDER BY event_id`).map(
        (r) => r.event_id,
      );
    const deadline = Date.now() + 15_000;
    while ((await left()).length > 2 && Date.now() < deadline) await Bun.sleep(200);
    expect(await left()).toEqual(["evt_old_pending", "evt_recent"]);
    const log = await api("GET", `/webhooks/${id}/deliveries`);
    expect(log.status).toBe(200);
    expect(JSON.stringify(log.json)).not.toContain("evt_old_ok");
  });
});
