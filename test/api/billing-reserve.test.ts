// The API spec (docs/api.md), States and transitions (credits reserved at accept, settled on success, released on
// failure or cancel), Limits (credits) and Errors (402 billing errors); issue 3, point 6.
//
// No billed operation has an executor in this release (ocr, convert, compress and redact answer
// 422 operation_unsupported), so the real service cannot accept a billed job. This file serves
// the real routes (buildApp(allRoutes), real POST /jobs transaction, real Postgres) in-process
// with compress and ocr switched on in the catalogue, and no worker: jobs stay queued, and the
// test drives the final transitions with the queue's own functions (src/queue/finish.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { randomUUID } from "node:crypto";
import { client, createDatabase, expectEnvelope } from "../support/service";
import { migrate } from "../../src/db/migrate";
import { connect, disconnect, type Sql } from "../../src/db/client";
import { buildApp } from "../../src/http/app";
import { allRoutes } from "../../src/http/routes";
import { operations } from "../../src/domain/operations";
import { createAccount, createKey } from "../../src/admin/commands";
import { cancelJob, completeJob, failJob } from "../../src/queue/finish";
import { currentPeriod } from "../../src/billing/credits";

let db: Awaited<ReturnType<typeof createDatabase>>;
let sql: Sql;
let app: ReturnType<typeof buildApp>;
let base: string;
const saved = { compress: operations.compress!.available, ocr: operations.ocr!.available };

beforeAll(async () => {
  db = await createDatabase();
  sql = postgres(db.url, { max: 4, onnotice: () => {} }) as unknown as Sql;
  await migrate(sql);
  connect(db.url, 8);
  operations.compress!.available = true;
  operations.ocr!.available = true;
  app = buildApp(allRoutes);
  app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `http://127.0.0.1:${app.server!.port}/api/v1`;
}, 60_000);
afterAll(async () => {
  operations.compress!.available = saved.compress;
  operations.ocr!.available = saved.ocr;
  await app?.stop();
  await disconnect();
  await sql?.end({ timeout: 2 });
  await db?.drop();
}, 60_000);

let n = 0;
async function newAccount(opts: { plan?: "starter" | "free"; cap?: number | null } = {}) {
  const a = await createAccount(sql, `reserve${++n}-${Date.now()}@example.com`, opts.plan ?? "starter", true);
  if (opts.cap !== undefined) await sql`UPDATE accounts SET spending_cap_eur = ${opts.cap} WHERE id = ${a.id}`;
  const live = await createKey(sql, a.id, "live");
  const test = await createKey(sql, a.id, "test");
  return { accountId: a.id, live: live.key, liveId: live.id, test: test.key, testId: test.id };
}

/** A ready file row (uploads need the native inspector; the POST /jobs path only reads the row). */
async function file(accountId: string, mode: "live" | "test", pages: number, kind = "pdf"): Promise<string> {
  const id = randomUUID();
  await sql`INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, status, storage_key, expires_at)
            VALUES (${id}, ${accountId}, ${mode}, 'in.pdf', 'application/pdf', ${kind}, 1000, ${pages}, 'ready', ${"files/xx/" + id}, now() + interval '1 day')`;
  return id;
}

async function charged(accountId: string, credits: number) {
  await sql`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
            VALUES (${accountId}, NULL, 'charge', ${credits}, ${credits}, 'compress', ${currentPeriod()})`;
}

async function ledger(jobId: string): Promise<any[]> {
  return [...(await sql`SELECT entry, credits, pages FROM credit_ledger WHERE job_id = ${jobId} ORDER BY id`)];
}

async function running(jobId: string, workerId = "test-worker") {
  await sql`UPDATE jobs SET status = 'running', attempts = attempts + 1, worker_id = ${workerId}, started_at = now() WHERE id = ${jobId}`;
}

describe("reserve at accept (live)", () => {
  test("a billed operation reserves pages x credits per page in one ledger row, in the same transaction as the job", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 10);
    const r = await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f });
    expect(r.status).toBe(202);
    expect(r.json.credits).toEqual({ billed: true, pages_estimated: 10, credits_per_page: 1, credits_reserved: 10 });
    expect(await ledger(r.json.id)).toEqual([{ entry: "reserve", credits: 10, pages: 10 }]);
    const u = await client(base, a.live)("GET", "/usage");
    expect(u.status).toBe(200);
    expect(u.json).toMatchObject({
      livemode: true,
      billed: true,
      included_credits: 2000,
      used_credits: 0,
      reserved_credits: 10,
      remaining_credits: 1990,
      pages_in_flight: 10,
    });
    expect(u.json.ledger).toEqual([
      expect.objectContaining({ job_id: r.json.id, entry: "reserve", credits: 10, pages: 10, operation: "compress" }),
    ]);
  }, 60_000);

  test("ocr reserves 3 credits per page, and pages[] narrows the count", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 10);
    const all = await client(base, a.live)("POST", "/jobs", { operation: "ocr", file_id: f });
    expect(all.status).toBe(202);
    expect(all.json.credits).toEqual({ billed: true, pages_estimated: 10, credits_per_page: 3, credits_reserved: 30 });
    const some = await client(base, a.live)("POST", "/jobs", {
      operation: "ocr",
      file_id: f,
      options: { pages: [0, 2] },
    });
    expect(some.status).toBe(202);
    expect(some.json.credits).toEqual({ billed: true, pages_estimated: 2, credits_per_page: 3, credits_reserved: 6 });
    expect(await ledger(some.json.id)).toEqual([{ entry: "reserve", credits: 6, pages: 2 }]);
  }, 60_000);

  test("sandbox never bills: billed false, nothing reserved, no ledger row, usage all zero", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "test", 10);
    const r = await client(base, a.test)("POST", "/jobs", { operation: "compress", file_id: f });
    expect(r.status).toBe(202);
    expect(r.json.credits).toEqual({ billed: false, pages_estimated: 10, credits_per_page: 0, credits_reserved: 0 });
    expect(r.json.sandbox).toBe(true);
    expect(await ledger(r.json.id)).toEqual([]);
    const u = await client(base, a.test)("GET", "/usage");
    expect(u.json).toMatchObject({
      livemode: false,
      billed: false,
      included_credits: 0,
      used_credits: 0,
      remaining_credits: 0,
      reserved_credits: 0,
      overage_credits: 0,
      overage_pages: 0,
      overage_amount_eur: 0,
      pages_in_flight: 0,
      ledger: [],
    });
  }, 60_000);

  test("spending_cap_reached (402, billing_error) carries pages and remaining; nothing is created", async () => {
    const a = await newAccount({ cap: 0.3 }); // 20 overage credits
    await charged(a.accountId, 1995);
    const f = await file(a.accountId, "live", 40);
    const r = await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f });
    const e = expectEnvelope(r, 402, "spending_cap_reached");
    expect(e.type).toBe("billing_error");
    expect(e.pages).toBe(40);
    expect(e.remaining).toBe(25);
    expect((await sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${a.accountId}`)[0]!.n).toBe(0);
    expect(
      (
        await sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${a.accountId} AND job_id IS NOT NULL`
      )[0]!.n,
    ).toBe(0);
    // 25 pages fit exactly.
    const fits = await file(a.accountId, "live", 25);
    expect((await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: fits })).status).toBe(202);
  }, 60_000);

  test("spending cap 0: insufficient_credits (402) with pages and remaining", async () => {
    const a = await newAccount({ cap: 0 });
    await charged(a.accountId, 1999);
    const f = await file(a.accountId, "live", 2);
    const e = expectEnvelope(
      await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f }),
      402,
      "insufficient_credits",
    );
    expect(e.type).toBe("billing_error");
    expect(e.pages).toBe(2);
    expect(e.remaining).toBe(1);
  }, 60_000);

  test("concurrent jobs of two keys of one account cannot both take the last credits", async () => {
    const a = await newAccount({ cap: 0 });
    const second = await createKey(sql, a.accountId, "live");
    await charged(a.accountId, 1990);
    const f = await file(a.accountId, "live", 10);
    const [x, y] = await Promise.all([
      client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f }),
      client(base, second.key)("POST", "/jobs", { operation: "compress", file_id: f }),
    ]);
    expect([x.status, y.status].sort()).toEqual([202, 402]);
    const reserves =
      await sql`SELECT credits FROM credit_ledger WHERE account_id = ${a.accountId} AND entry = 'reserve'`;
    expect(reserves.map((r) => r.credits)).toEqual([10]);
  }, 60_000);

  test("free operations never bill, in live mode either", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 10);
    const r = await client(base, a.live)("POST", "/jobs", {
      operation: "rotate",
      file_id: f,
      options: { degrees: 90 },
    });
    expect(r.status).toBe(202);
    expect(r.json.credits).toEqual({ billed: false, pages_estimated: 10, credits_per_page: 0, credits_reserved: 0 });
    expect(await ledger(r.json.id)).toEqual([]);
  }, 60_000);
});

describe("settle, release", () => {
  test("success settles to the pages actually processed: release + charge, with the job.succeeded event, in one transaction", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 10);
    const job = (await client(base, a.live)("POST", "/jobs", { operation: "ocr", file_id: f })).json;
    await running(job.id);
    expect(await completeJob(job.id, "test-worker", { type: "json", json: { pages: [] } }, 7)).toBe(true);
    expect(await ledger(job.id)).toEqual([
      { entry: "reserve", credits: 30, pages: 10 },
      { entry: "release", credits: 30, pages: 10 },
      { entry: "charge", credits: 21, pages: 7 },
    ]);
    // Repeating the transition (a duplicate finish) changes nothing.
    expect(await completeJob(job.id, "test-worker", { type: "json", json: {} }, 7)).toBe(false);
    expect((await ledger(job.id)).length).toBe(3);
    const ev = await sql`SELECT type FROM events WHERE payload->'data'->'object'->>'id' = ${job.id}`;
    expect(ev.map((e) => e.type)).toEqual(["job.succeeded"]);
    const u = (await client(base, a.live)("GET", "/usage")).json;
    expect(u).toMatchObject({
      used_credits: 21,
      reserved_credits: 0,
      remaining_credits: 1979,
      pages_in_flight: 0,
      overage_credits: 0,
    });
    const g = (await client(base, a.live)("GET", `/jobs/${job.id}`)).json;
    expect(g.result.pages_processed).toBe(7);
  }, 60_000);

  test("failure releases the reservation and charges nothing", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 5);
    const job = (await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f })).json;
    await running(job.id);
    expect(await failJob(job.id, { code: "file_unreadable", message: "x" }, "test-worker")).toBe(true);
    expect(await ledger(job.id)).toEqual([
      { entry: "reserve", credits: 5, pages: 5 },
      { entry: "release", credits: 5, pages: 5 },
    ]);
    const ev = await sql`SELECT type, payload FROM events WHERE payload->'data'->'object'->>'id' = ${job.id}`;
    expect(ev.map((e) => e.type)).toEqual(["job.failed"]);
    expect(ev[0]!.payload.data.object.error.code).toBe("file_unreadable");
  }, 60_000);

  test("cancel (queued, over HTTP) releases the reservation at once", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 6);
    const job = (await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f })).json;
    const c = await client(base, a.live)("POST", `/jobs/${job.id}/cancel`);
    expect(c.status).toBe(200);
    expect(c.json.status).toBe("cancelled");
    expect(await ledger(job.id)).toEqual([
      { entry: "reserve", credits: 6, pages: 6 },
      { entry: "release", credits: 6, pages: 6 },
    ]);
    // A second cancel is harmless and writes nothing.
    expect((await client(base, a.live)("POST", `/jobs/${job.id}/cancel`)).json.status).toBe("cancelled");
    expect((await ledger(job.id)).length).toBe(2);
    expect((await client(base, a.live)("GET", "/usage")).json).toMatchObject({
      reserved_credits: 0,
      pages_in_flight: 0,
      used_credits: 0,
    });
  }, 60_000);

  test("a worker finishing after a cancel neither charges nor changes the job", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 4);
    const job = (await client(base, a.live)("POST", "/jobs", { operation: "compress", file_id: f })).json;
    await running(job.id);
    await cancelJob(job.id);
    expect(await completeJob(job.id, "test-worker", { type: "json", json: {} }, 4)).toBe(false);
    expect(await failJob(job.id, { code: "internal_error", message: "x" }, "test-worker")).toBe(false);
    expect((await ledger(job.id)).map((r) => r.entry)).toEqual(["reserve", "release"]);
    expect((await sql`SELECT status FROM jobs WHERE id = ${job.id}`)[0]!.status).toBe("cancelled");
  }, 60_000);

  test("usage reports overage pages and amount past the included credits", async () => {
    const a = await newAccount();
    await charged(a.accountId, 1990);
    const f = await file(a.accountId, "live", 10);
    const job = (await client(base, a.live)("POST", "/jobs", { operation: "ocr", file_id: f })).json;
    await running(job.id);
    await completeJob(job.id, "test-worker", { type: "json", json: {} }, 10);
    const u = (await client(base, a.live)("GET", "/usage")).json;
    // 1990 + 30 = 2020 credits: 20 overage credits = 0.30 EUR, from the OCR job's pages (7 of 10 pages are past the line).
    expect(u).toMatchObject({ used_credits: 2020, remaining_credits: 0, overage_credits: 20, overage_amount_eur: 0.3 });
    expect(u.overage_pages).toBe(7);
  }, 60_000);
});

describe("idempotency with a billed job", () => {
  test("a replay returns the same job and never reserves twice", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 3);
    const body = { operation: "compress", file_id: f };
    const first = await client(base, a.live)("POST", "/jobs", body, { "idempotency-key": "bill-once" });
    const again = await client(base, a.live)("POST", "/jobs", body, { "idempotency-key": "bill-once" });
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.json.id).toBe(first.json.id);
    expect((await sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${a.accountId}`)[0]!.n).toBe(1);
    expect(
      (
        await sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${a.accountId} AND entry = 'reserve'`
      )[0]!.n,
    ).toBe(1);
  }, 60_000);

  test("five concurrent identical requests: one job, one reservation", async () => {
    const a = await newAccount();
    const f = await file(a.accountId, "live", 3);
    const body = { operation: "compress", file_id: f };
    const all = await Promise.all(
      Array.from({ length: 5 }, () => client(base, a.live)("POST", "/jobs", body, { "idempotency-key": "burst" })),
    );
    for (const r of all) expect([202, 409]).toContain(r.status);
    expect((await sql`SELECT count(*)::int AS n FROM jobs WHERE account_id = ${a.accountId}`)[0]!.n).toBe(1);
    expect(
      (
        await sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${a.accountId} AND entry = 'reserve'`
      )[0]!.n,
    ).toBe(1);
  }, 60_000);

  test("a refused billed request (402) does not keep the key: the same key works once credits allow", async () => {
    const a = await newAccount({ cap: 0 });
    await charged(a.accountId, 2000);
    const f = await file(a.accountId, "live", 3);
    const body = { operation: "compress", file_id: f };
    expectEnvelope(
      await client(base, a.live)("POST", "/jobs", body, { "idempotency-key": "after-402" }),
      402,
      "insufficient_credits",
    );
    await sql`UPDATE accounts SET spending_cap_eur = NULL WHERE id = ${a.accountId}`;
    const r = await client(base, a.live)("POST", "/jobs", body, { "idempotency-key": "after-402" });
    expect(r.status).toBe(202);
    expect(r.headers.get("idempotent-replayed")).toBeNull();
  }, 60_000);
});
