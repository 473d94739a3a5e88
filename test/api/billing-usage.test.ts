// The API spec (docs/api.md), Limits (credits: merge, split, rotate, reorder, delete_pages, protect, unlock are
// free; sandbox never bills) and "Account and usage" (GET /usage); issue 3, point 6, over the
// real service: a live starter key runs free operations end to end without a single ledger row,
// and GET /usage reports the period for live keys and all zeros for sandbox keys.
import { describe, expect, test } from "bun:test";
import { client, expectEnvelope, hasCorpus } from "../support/service";
import { useService } from "../support/use-service";
import { createJob, finishedJob, keyFor, uploadMadePdfOk, uploadOk } from "../support/jobs";
import { currentPeriod, periodBounds } from "../../src/billing/credits";
import { operations } from "../../src/domain/operations";

const svc = useService({ workers: 1 }, 60_000);

describe("free operations in live mode", () => {
  test.skipIf(!hasCorpus)(
    "rotate, split, merge, protect and unlock on a live starter key: billed false, nothing reserved, no ledger row",
    async () => {
      const { key, accountId } = await svc.newKey({ mode: "live", plan: "starter" });
      const a = await uploadOk(svc, key, "latex-outline-4-pages.pdf");
      const b = await uploadOk(svc, key, "encrypted-libreoffice-rc4.pdf");
      const bodies = [
        { operation: "rotate", file_id: a.id, options: { degrees: 90 } },
        { operation: "split", file_id: a.id, options: { mode: "every_page" } },
        { operation: "merge", file_ids: [a.id, a.id] },
        { operation: "protect", file_id: a.id, options: { user_password: "x" } },
        { operation: "unlock", file_id: b.id, options: { password: "openpassword" } },
        { operation: "delete_pages", file_id: a.id, options: { pages: [0] } },
        { operation: "reorder", file_id: a.id, options: { order: [1, 0, 2, 3] } },
      ];
      for (const body of bodies) {
        const created = await createJob(svc, key, body);
        expect({
          op: body.operation,
          billed: created.credits.billed,
          reserved: created.credits.credits_reserved,
          livemode: created.livemode,
          sandbox: created.sandbox,
        }).toEqual({ op: body.operation, billed: false, reserved: 0, livemode: true, sandbox: false });
        const done = await finishedJob(svc, key, created.id);
        expect({ op: body.operation, status: done.status }).toEqual({ op: body.operation, status: "succeeded" });
        expect(done.credits.billed).toBe(false);
      }
      expect((await svc.sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${accountId}`)[0]!.n).toBe(
        0,
      );
    },
    60_000,
  );
});

describe("GET /usage", () => {
  test("live: included 2,000 credits for the starter plan, nothing used, the current UTC month, empty ledger", async () => {
    const { key } = await svc.newKey({ mode: "live" });
    const r = await client(svc.baseUrl, key)("GET", "/usage");
    expect(r.status).toBe(200);
    const period = currentPeriod();
    expect(r.json).toEqual({
      object: "usage",
      livemode: true,
      billed: true,
      period: { id: period, ...periodBounds(period) },
      included_credits: 2000,
      used_credits: 0,
      remaining_credits: 2000,
      reserved_credits: 0,
      overage_credits: 0,
      overage_pages: 0,
      overage_amount_eur: 0,
      pages_in_flight: 0,
      spending_cap_eur: null,
      ledger: [],
    });
  }, 60_000);

  test("live: the account's spending cap is reported", async () => {
    const { key, accountId } = await svc.newKey({ mode: "live" });
    await svc.sql`UPDATE accounts SET spending_cap_eur = 12.5 WHERE id = ${accountId}`;
    expect((await client(svc.baseUrl, key)("GET", "/usage")).json.spending_cap_eur).toBe(12.5);
  }, 60_000);

  test("sandbox: every figure zero and billed false, even with jobs run", async () => {
    const { key, accountId } = await svc.newKey({ mode: "test" });
    const f = await uploadMadePdfOk(svc, key, 1);
    await finishedJob(
      svc,
      key,
      (await createJob(svc, key, { operation: "rotate", file_id: f.id, options: { degrees: 90 } })).id,
    );
    const r = await client(svc.baseUrl, key)("GET", "/usage");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: "usage",
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
    // The same account's live key sees the live ledger only (empty here).
    const live = await keyFor(svc, accountId, "live");
    expect((await client(svc.baseUrl, live.key)("GET", "/usage")).json).toMatchObject({
      livemode: true,
      used_credits: 0,
      ledger: [],
    });
  }, 60_000);

  test("needs the usage:read scope", async () => {
    const k = await svc.newKey({
      mode: "live",
      scopes: ["jobs:read", "jobs:write", "documents:read", "documents:write", "webhooks:manage"],
    });
    expect(expectEnvelope(await client(svc.baseUrl, k.key)("GET", "/usage"), 403, "insufficient_scope").param).toBe(
      "usage:read",
    );
  }, 60_000);
});

// Once a billed operation has an executor (compress, 1 credit per page), the whole path runs
// over the real service: reserve at accept, settle to the pages processed, usage, 402s, replay.
describe.skipIf(!operations.compress?.available)("a billed operation end to end (compress)", () => {
  async function ledger(jobId: string) {
    return [...(await svc.sql`SELECT entry, credits, pages FROM credit_ledger WHERE job_id = ${jobId} ORDER BY id`)];
  }

  test("live: credits reserved at accept from the page count, settled to the pages processed, released on failure", async () => {
    const { key } = await svc.newKey({ mode: "live" });
    const f = await uploadMadePdfOk(svc, key, 4);
    const created = await createJob(
      svc,
      key,
      { operation: "compress", file_id: f.id, options: { level: "light" } },
      { "idempotency-key": "c-1" },
    );
    expect(created.credits).toEqual({ billed: true, pages_estimated: 4, credits_per_page: 1, credits_reserved: 4 });
    const replay = await client(svc.baseUrl, key)(
      "POST",
      "/jobs",
      { operation: "compress", file_id: f.id, options: { level: "light" } },
      { "idempotency-key": "c-1" },
    );
    expect(replay.json.id).toBe(created.id);
    const done = await finishedJob(svc, key, created.id, 60_000);
    const rows = await ledger(created.id);
    expect(["succeeded", "failed"]).toContain(done.status);
    if (done.status === "failed") console.log(`compress failed: ${JSON.stringify(done.error)}`);
    if (done.status === "succeeded") {
      expect(rows).toEqual([
        { entry: "reserve", credits: 4, pages: 4 },
        { entry: "release", credits: 4, pages: 4 },
        { entry: "charge", credits: done.result.pages_processed, pages: done.result.pages_processed },
      ]);
      const u = (await client(svc.baseUrl, key)("GET", "/usage")).json;
      expect(u).toMatchObject({
        used_credits: done.result.pages_processed,
        reserved_credits: 0,
        pages_in_flight: 0,
        remaining_credits: 2000 - done.result.pages_processed,
      });
    } else {
      expect(rows).toEqual([
        { entry: "reserve", credits: 4, pages: 4 },
        { entry: "release", credits: 4, pages: 4 },
      ]);
    }
  }, 90_000);

  test("sandbox compress is never billed", async () => {
    const { key, accountId } = await svc.newKey({ mode: "test" });
    const f = await uploadMadePdfOk(svc, key, 1);
    const created = await createJob(svc, key, { operation: "compress", file_id: f.id });
    expect(created.credits.billed).toBe(false);
    await finishedJob(svc, key, created.id, 60_000);
    expect((await svc.sql`SELECT count(*)::int AS n FROM credit_ledger WHERE account_id = ${accountId}`)[0]!.n).toBe(0);
  }, 90_000);

  test("live: 402 insufficient_credits with cap 0 once the included credits are used; 402 spending_cap_reached past the cap", async () => {
    const { key, accountId } = await svc.newKey({ mode: "live" });
    const f = await uploadMadePdfOk(svc, key, 4);
    await svc.sql`INSERT INTO credit_ledger (account_id, entry, credits, pages, operation, period) VALUES (${accountId}, 'charge', 1998, 1998, 'compress', ${currentPeriod()})`;
    await svc.sql`UPDATE accounts SET spending_cap_eur = 0 WHERE id = ${accountId}`;
    const e = expectEnvelope(
      await client(svc.baseUrl, key)("POST", "/jobs", { operation: "compress", file_id: f.id }),
      402,
      "insufficient_credits",
    );
    expect({ pages: e.pages, remaining: e.remaining }).toEqual({ pages: 4, remaining: 2 });
    await svc.sql`UPDATE accounts SET spending_cap_eur = 0.01 WHERE id = ${accountId}`;
    const c = expectEnvelope(
      await client(svc.baseUrl, key)("POST", "/jobs", { operation: "compress", file_id: f.id }),
      402,
      "spending_cap_reached",
    );
    expect({ pages: c.pages, remaining: c.remaining }).toEqual({ pages: 4, remaining: 2 });
  }, 90_000);
});
