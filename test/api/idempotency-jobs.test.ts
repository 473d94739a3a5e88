// The API spec (docs/api.md), "Idempotency on POST /jobs" (four rules), Limits (idempotency key 255 chars, kept 24
// hours) and Errors; issue 3, point 4. The service runs without workers, so jobs stay queued and
// nothing but the idempotency rules changes the job table. Files are ready rows in the table:
// the POST /jobs path only reads them.
import { describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { keyFor } from "../support/jobs";
import { requestHash } from "../../src/modules/jobs/idempotency";

const svc = useService({ workers: 0 }, 60_000);

async function setup(mode: "test" | "live" = "test") {
  const k = await svc.newKey({ mode });
  const fileId = randomUUID();
  await svc.sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, storage_key, expires_at)
                VALUES (${fileId}, ${k.accountId}, ${mode}, 'in.pdf', 'application/pdf', 'pdf', 1000, 4, 'ready', ${"files/xx/" + fileId}, now() + interval '1 day')`;
  const body = { operation: "rotate", file_id: fileId, options: { degrees: 90 }, metadata: { order: "o-1" } };
  return { ...k, fileId, body, call: client(svc.baseUrl, k.key) };
}

async function jobsOf(keyId: string): Promise<string[]> {
  return (await svc.sql`SELECT id FROM jobs WHERE key_id = ${keyId} ORDER BY created_at`).map((r) => r.id as string);
}

describe("rule 1 and 2: the first call creates, a retry with the same body replays", () => {
  test("same key + same body: 202 with the same job and Idempotent-Replayed: true; one job row", async () => {
    const s = await setup();
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "order-1" });
    expect(first.status).toBe(202);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await s.call("POST", "/jobs", s.body, { "idempotency-key": "order-1" });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json).toEqual(first.json);
    const third = await s.call("POST", "/jobs", s.body, { "idempotency-key": "order-1" });
    expect(third.json.id).toBe(first.json.id);
    expect(await jobsOf(s.keyId)).toEqual([first.json.id]);
  }, 60_000);

  test("the body is compared by content: key order and whitespace do not matter", async () => {
    const s = await setup();
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "same-content" });
    const reordered = `{ "metadata": {"order": "o-1"},\n "options": {"degrees": 90}, "file_id": "${s.fileId}", "operation": "rotate" }`;
    const again = await s.call("POST", "/jobs", reordered, { "idempotency-key": "same-content" });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
  }, 60_000);

  test("a live job: the replay makes no second job (and no ledger row, the operation being free)", async () => {
    const s = await setup("live");
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "live-1" });
    const again = await s.call("POST", "/jobs", s.body, { "idempotency-key": "live-1" });
    expect(again.json.id).toBe(first.json.id);
    expect(await jobsOf(s.keyId)).toEqual([first.json.id]);
    expect((await svc.sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${s.accountId}`)[0]!.n).toBe(
      0,
    );
  }, 60_000);

  test("the replay is the stored answer, even after the job moved on", async () => {
    const s = await setup();
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "then-cancel" });
    expect((await s.call("POST", `/jobs/${first.json.id}/cancel`)).json.status).toBe("cancelled");
    const again = await s.call("POST", "/jobs", s.body, { "idempotency-key": "then-cancel" });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    expect(await jobsOf(s.keyId)).toEqual([first.json.id]);
  }, 60_000);

  test("a replay does not count against the concurrency limit", async () => {
    const s = await setup();
    const a = await s.call("POST", "/jobs", s.body, { "idempotency-key": "slot-a" });
    const b = await s.call("POST", "/jobs", s.body, { "idempotency-key": "slot-b" });
    expect([a.status, b.status]).toEqual([202, 202]);
    const replay = await s.call("POST", "/jobs", s.body, { "idempotency-key": "slot-a" });
    expect(replay.status).toBe(202);
    expect(replay.json.id).toBe(a.json.id);
    // A new key is a new job, refused by the limit — and the refusal is not stored.
    expectEnvelope(await s.call("POST", "/jobs", s.body, { "idempotency-key": "slot-c" }), 429, "concurrency_limit");
    await s.call("POST", `/jobs/${a.json.id}/cancel`);
    const c = await s.call("POST", "/jobs", s.body, { "idempotency-key": "slot-c" });
    expect(c.status).toBe(202);
    expect(c.headers.get("idempotent-replayed")).toBeNull();
  }, 60_000);

  test("the record is kept 24 hours; an expired record no longer replays", async () => {
    const s = await setup();
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "ttl" });
    const [rec] =
      await svc.sql`SELECT state, response_status, EXTRACT(EPOCH FROM expires_at - created_at)::int AS ttl FROM idempotency_records WHERE key_id = ${s.keyId} AND idempotency_key = 'ttl'`;
    expect(rec).toEqual({ state: "done", response_status: 202, ttl: 86_400 });
    await s.call("POST", `/jobs/${first.json.id}/cancel`);
    await svc.sql`UPDATE idempotency_records SET expires_at = now() - interval '1 second' WHERE key_id = ${s.keyId} AND idempotency_key = 'ttl'`;
    const fresh = await s.call("POST", "/jobs", s.body, { "idempotency-key": "ttl" });
    expect(fresh.status).toBe(202);
    expect(fresh.headers.get("idempotent-replayed")).toBeNull();
    expect(fresh.json.id).not.toBe(first.json.id);
  }, 60_000);
});

describe("rule 3: same key, different body", () => {
  test("422 idempotency_key_reused (idempotency_error); no second job", async () => {
    const s = await setup();
    const first = await s.call("POST", "/jobs", s.body, { "idempotency-key": "reuse" });
    for (const body of [
      { ...s.body, options: { degrees: 180 } },
      { ...s.body, metadata: { order: "o-2" } },
      { ...s.body, metadata: undefined },
      { operation: "split", file_id: s.fileId },
    ]) {
      const e = expectEnvelope(
        await s.call("POST", "/jobs", body, { "idempotency-key": "reuse" }),
        422,
        "idempotency_key_reused",
      );
      expect(e.type).toBe("idempotency_error");
    }
    expect(await jobsOf(s.keyId)).toEqual([first.json.id]);
    // The original still replays.
    expect((await s.call("POST", "/jobs", s.body, { "idempotency-key": "reuse" })).json.id).toBe(first.json.id);
  }, 60_000);

  test("a request that failed is not stored: the key can be used again with a corrected body", async () => {
    const s = await setup();
    const bad = { ...s.body, file_id: randomUUID() };
    expectEnvelope(await s.call("POST", "/jobs", bad, { "idempotency-key": "fix-me" }), 404, "not_found");
    expectEnvelope(
      await s.call("POST", "/jobs", { ...s.body, options: { degrees: 45 } }, { "idempotency-key": "fix-me" }),
      422,
      "invalid_options",
    );
    const ok = await s.call("POST", "/jobs", s.body, { "idempotency-key": "fix-me" });
    expect(ok.status).toBe(202);
    expect(ok.headers.get("idempotent-replayed")).toBeNull();
  }, 60_000);
});

describe("rule 4: same key while the first request is still processing", () => {
  test("409 idempotency_in_progress (conflict_error) with Retry-After", async () => {
    const s = await setup();
    await svc.sql`INSERT INTO idempotency_records (key_id, idempotency_key, request_hash, state, expires_at)
                  VALUES (${s.keyId}, 'busy', ${requestHash(s.body)}, 'in_progress', now() + interval '24 hours')`;
    const r = await s.call("POST", "/jobs", s.body, { "idempotency-key": "busy" });
    const e = expectEnvelope(r, 409, "idempotency_in_progress");
    expect(e.type).toBe("conflict_error");
    expect(r.headers.get("retry-after")).toMatch(/^\d+$/);
    // A different body under the same in-flight key is still a reuse.
    expectEnvelope(
      await s.call("POST", "/jobs", { ...s.body, options: { degrees: 270 } }, { "idempotency-key": "busy" }),
      422,
      "idempotency_key_reused",
    );
    expect(await jobsOf(s.keyId)).toEqual([]);
  }, 60_000);

  test("an in-progress record left behind by a crashed request is taken over after a while", async () => {
    const s = await setup();
    await svc.sql`INSERT INTO idempotency_records (key_id, idempotency_key, request_hash, state, created_at, expires_at)
                  VALUES (${s.keyId}, 'crashed', ${requestHash(s.body)}, 'in_progress', now() - interval '5 minutes', now() + interval '24 hours')`;
    const r = await s.call("POST", "/jobs", s.body, { "idempotency-key": "crashed" });
    expect(r.status).toBe(202);
    expect(await jobsOf(s.keyId)).toEqual([r.json.id]);
  }, 60_000);

  test("five identical requests at once: exactly one job; the others replay it or answer 409", async () => {
    for (let round = 0; round < 3; round++) {
      const s = await setup();
      const all = await Promise.all(
        Array.from({ length: 5 }, () => s.call("POST", "/jobs", s.body, { "idempotency-key": `burst-${round}` })),
      );
      const jobs = await jobsOf(s.keyId);
      expect(jobs.length).toBe(1);
      const created = all.filter((r) => r.status === 202 && r.headers.get("idempotent-replayed") === null);
      expect(created.length).toBe(1);
      for (const r of all) {
        if (r.status === 202) expect(r.json.id).toBe(jobs[0]!);
        else expect(r.json.error.code).toBe("idempotency_in_progress");
        expect([202, 409]).toContain(r.status);
      }
      expect((await s.call("POST", "/jobs", s.body, { "idempotency-key": `burst-${round}` })).json.id).toBe(jobs[0]!);
    }
  }, 60_000);
});

describe("the key itself", () => {
  test("up to 255 characters; longer or empty is 422 validation_error on Idempotency-Key", async () => {
    const s = await setup();
    const e = expectEnvelope(
      await s.call("POST", "/jobs", s.body, { "idempotency-key": "k".repeat(256) }),
      422,
      "validation_error",
    );
    expect(e.param).toBe("Idempotency-Key");
    expectEnvelope(await s.call("POST", "/jobs", s.body, { "idempotency-key": "" }), 422, "validation_error");
    expect(await jobsOf(s.keyId)).toEqual([]);
    const ok = await s.call("POST", "/jobs", s.body, { "idempotency-key": "k".repeat(255) });
    expect(ok.status).toBe(202);
    expect((await s.call("POST", "/jobs", s.body, { "idempotency-key": "k".repeat(255) })).json.id).toBe(ok.json.id);
  }, 60_000);

  test("keys are scoped per API key: the same Idempotency-Key on another key is a new job", async () => {
    const s = await setup();
    const other = await keyFor(svc, s.accountId, "test");
    const a = await s.call("POST", "/jobs", s.body, { "idempotency-key": "shared" });
    const b = await client(svc.baseUrl, other.key)("POST", "/jobs", s.body, { "idempotency-key": "shared" });
    expect(a.status).toBe(202);
    expect(b.status).toBe(202);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
    expect(b.json.id).not.toBe(a.json.id);
    // A different body under the same key string on the other API key is no reuse either.
    const c = await client(svc.baseUrl, other.key)(
      "POST",
      "/jobs",
      { ...s.body, options: { degrees: 180 } },
      { "idempotency-key": "also-shared" },
    );
    const d = await s.call(
      "POST",
      "/jobs",
      { ...s.body, options: { degrees: 270 } },
      { "idempotency-key": "also-shared" },
    );
    expect(c.status).toBe(202);
    expect(d.status === 202 || d.json?.error?.code === "concurrency_limit").toBe(true);
  }, 60_000);

  test("without the header every call is a new job", async () => {
    const s = await setup();
    const a = await s.call("POST", "/jobs", s.body);
    const b = await s.call("POST", "/jobs", s.body);
    expect(a.json.id).not.toBe(b.json.id);
    expect(a.headers.get("idempotent-replayed")).toBeNull();
    expect(b.headers.get("idempotent-replayed")).toBeNull();
  }, 60_000);
});
