// The API spec (docs/api.md), Limits (credits) and Billing model; issue 3, point 6: the append-only credit ledger
// of src/billing/credits.ts against a real Postgres — reserve at accept (checked against the
// included credits, the overage and the spending cap), settle to the pages actually processed,
// release on failure or cancel, each idempotent per job.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createDatabase } from "../support/service";
import { migrate } from "../../src/db/migrate";
import type { Sql } from "../../src/db/client";
import { createAccount, createKey } from "../../src/admin/commands";
import {
  currentPeriod,
  overageEur,
  periodBounds,
  periodUsage,
  releaseCredits,
  reserveCredits,
  settleCredits,
} from "../../src/billing/credits";
import { ApiError } from "../../src/domain/errors";

let db: Awaited<ReturnType<typeof createDatabase>>;
let sql: Sql;

beforeAll(async () => {
  db = await createDatabase();
  sql = postgres(db.url, { max: 4, onnotice: () => {} }) as unknown as Sql;
  await migrate(sql);
}, 60_000);
afterAll(async () => {
  await sql?.end({ timeout: 2 });
  await db?.drop();
}, 60_000);

interface Acct {
  id: string;
  keyId: string;
  plan: "starter" | "free";
  spendingCapEur: number | null;
}

let n = 0;
async function account(plan: "starter" | "free" = "starter", spendingCapEur: number | null = null): Promise<Acct> {
  const a = await createAccount(sql, `ledger${++n}-${Date.now()}@example.com`, plan, true);
  const k = await createKey(sql, a.id, "live");
  return { id: a.id, keyId: k.id, plan, spendingCapEur };
}

async function job(a: Acct, operation = "compress", creditsPerPage = 1): Promise<string> {
  const [j] = await sql`
    INSERT INTO jobs (account_id, key_id, mode, operation, kind, file_ids, pages_estimated, credits_per_page, billed)
    VALUES (${a.id}, ${a.keyId}, 'live', ${operation}, ${operation === "ocr" ? "ocr" : operation}, ARRAY[${crypto.randomUUID()}]::uuid[], 1, ${creditsPerPage}, true)
    RETURNING id`;
  return j!.id as string;
}

/** Usage already committed this period, as charge rows without a job. */
async function charged(a: Acct, credits: number) {
  await sql`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
            VALUES (${a.id}, NULL, 'charge', ${credits}, ${credits}, 'compress', ${currentPeriod()})`;
}

async function rows(jobId: string): Promise<any[]> {
  return [
    ...(await sql`SELECT entry, credits, pages, operation, period FROM credit_ledger WHERE job_id = ${jobId} ORDER BY id`),
  ];
}

async function reserveFails(a: Acct, credits: number, pages: number): Promise<ApiError> {
  const id = await job(a);
  try {
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", credits, pages));
  } catch (e) {
    if (e instanceof ApiError) {
      expect(await rows(id)).toEqual([]);
      return e;
    }
    throw e;
  }
  throw new Error("reserveCredits did not refuse");
}

describe("periods and prices", () => {
  test("the period is the UTC calendar month", () => {
    expect(currentPeriod(new Date("2026-09-30T23:59:59Z"))).toBe("2026-09");
    expect(currentPeriod(new Date("2026-10-01T00:00:00Z"))).toBe("2026-10");
    expect(periodBounds("2026-12")).toEqual({ start: "2026-12-01T00:00:00.000Z", end: "2027-01-01T00:00:00.000Z" });
    expect(periodBounds("2026-02")).toEqual({ start: "2026-02-01T00:00:00.000Z", end: "2026-03-01T00:00:00.000Z" });
  }, 60_000);

  test("overage costs 0.015 EUR per credit (an OCR page, 3 credits, is 0.045 EUR)", () => {
    expect(overageEur(1)).toBe(0.015);
    expect(overageEur(3)).toBe(0.045);
    expect(overageEur(1000)).toBe(15);
    expect(overageEur(0)).toBe(0);
  }, 60_000);
});

describe("reserve", () => {
  test("within the included credits: one reserve row with credits and pages; usage counts it in flight", async () => {
    const a = await account();
    const id = await job(a, "ocr", 3);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "ocr", 30, 10));
    expect(await rows(id)).toEqual([
      { entry: "reserve", credits: 30, pages: 10, operation: "ocr", period: currentPeriod() },
    ]);
    expect(await periodUsage(sql, a.id)).toEqual({ charged: 0, reservedInFlight: 30, pagesInFlight: 10 });
  }, 60_000);

  test("reservations count against the included credits like charges do", async () => {
    const a = await account("starter", 0);
    await charged(a, 1500);
    const first = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, first, "compress", 400, 400));
    // 1500 charged + 400 in flight: 100 left; 101 is one too many with overage disabled.
    const e = await reserveFails(a, 101, 101);
    expect(e.code).toBe("insufficient_credits");
    expect(e.extra).toEqual({ pages: 101, remaining: 100 });
    const ok = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, ok, "compress", 100, 100));
  }, 60_000);

  test("spending cap 0 means no overage: insufficient_credits (402) with pages and remaining", async () => {
    const a = await account("starter", 0);
    await charged(a, 1990);
    const e = await reserveFails(a, 25, 25);
    expect(e.code).toBe("insufficient_credits");
    expect(e.status).toBe(402);
    expect(e.extra).toEqual({ pages: 25, remaining: 10 });
  }, 60_000);

  test("the free plan has no included credits: with cap 0 every billed job is insufficient_credits", async () => {
    const a = await account("free", 0);
    const e = await reserveFails(a, 1, 1);
    expect(e.code).toBe("insufficient_credits");
    expect(e.extra).toEqual({ pages: 1, remaining: 0 });
  }, 60_000);

  test("past the included credits, a job that would push overage over the cap is spending_cap_reached with pages and remaining", async () => {
    const a = await account("starter", 0.5); // 0.50 EUR = 33 overage credits
    await charged(a, 1990);
    // 100 credits: 10 included + 90 overage = 1.35 EUR > 0.50 EUR.
    const e = await reserveFails(a, 100, 100);
    expect(e.code).toBe("spending_cap_reached");
    expect(e.status).toBe(402);
    expect(e.extra).toEqual({ pages: 100, remaining: 10 + 33 });
    // 43 credits fit exactly: 10 included + 33 overage = 0.495 EUR.
    const ok = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, ok, "compress", 43, 43));
    const again = await reserveFails(a, 1, 1);
    expect(again.code).toBe("spending_cap_reached");
    expect(again.extra).toEqual({ pages: 1, remaining: 0 });
  }, 60_000);

  test("overage already used counts against the cap", async () => {
    const a = await account("starter", 1.5); // 100 overage credits
    await charged(a, 2060); // 60 overage credits used (0.90 EUR)
    const e = await reserveFails(a, 41, 41);
    expect(e.code).toBe("spending_cap_reached");
    expect(e.extra).toEqual({ pages: 41, remaining: 40 });
    const ok = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, ok, "compress", 40, 40));
  }, 60_000);

  test("without a spending cap, jobs continue as overage", async () => {
    const a = await account("starter", null);
    await charged(a, 2000);
    const id = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", 5000, 5000));
    expect((await rows(id)).length).toBe(1);
  }, 60_000);

  test("a job reserves at most once (the ledger refuses a second reserve row)", async () => {
    const a = await account();
    const id = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", 5, 5));
    let failed = false;
    try {
      await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", 5, 5));
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    expect((await rows(id)).length).toBe(1);
  }, 60_000);
});

describe("settle and release", () => {
  let a: Acct;
  beforeEach(async () => {
    a = await account();
  });

  test("settle releases the hold and charges the pages actually processed", async () => {
    const id = await job(a, "ocr", 3);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "ocr", 30, 10));
    await sql.begin((tx) => settleCredits(tx as unknown as Sql, id, 7, 3));
    expect(await rows(id)).toEqual([
      { entry: "reserve", credits: 30, pages: 10, operation: "ocr", period: currentPeriod() },
      { entry: "release", credits: 30, pages: 10, operation: "ocr", period: currentPeriod() },
      { entry: "charge", credits: 21, pages: 7, operation: "ocr", period: currentPeriod() },
    ]);
    expect(await periodUsage(sql, a.id)).toEqual({ charged: 21, reservedInFlight: 0, pagesInFlight: 0 });
  }, 60_000);

  test("settle is idempotent: a second settle (or a late release) writes nothing", async () => {
    const id = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", 8, 8));
    await sql.begin((tx) => settleCredits(tx as unknown as Sql, id, 8, 1));
    await sql.begin((tx) => settleCredits(tx as unknown as Sql, id, 8, 1));
    await sql.begin((tx) => releaseCredits(tx as unknown as Sql, id));
    expect((await rows(id)).map((r) => r.entry)).toEqual(["reserve", "release", "charge"]);
    expect(await periodUsage(sql, a.id)).toEqual({ charged: 8, reservedInFlight: 0, pagesInFlight: 0 });
  }, 60_000);

  test("release returns the whole hold and is idempotent; nothing is charged", async () => {
    const id = await job(a);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, a, id, "compress", 12, 12));
    await sql.begin((tx) => releaseCredits(tx as unknown as Sql, id));
    await sql.begin((tx) => releaseCredits(tx as unknown as Sql, id));
    expect(await rows(id)).toEqual([
      { entry: "reserve", credits: 12, pages: 12, operation: "compress", period: currentPeriod() },
      { entry: "release", credits: 12, pages: 12, operation: "compress", period: currentPeriod() },
    ]);
    expect(await periodUsage(sql, a.id)).toEqual({ charged: 0, reservedInFlight: 0, pagesInFlight: 0 });
  }, 60_000);

  test("settle or release of a job that never reserved (a free operation) writes nothing", async () => {
    const id = await job(a, "rotate", 0);
    await sql.begin((tx) => releaseCredits(tx as unknown as Sql, id));
    await sql.begin((tx) => settleCredits(tx as unknown as Sql, id, 4, 0));
    expect(await rows(id)).toEqual([]);
  }, 60_000);

  test("a release frees included credits for the next job", async () => {
    const b = await account("starter", 0);
    await charged(b, 1990);
    const first = await job(b);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, b, first, "compress", 10, 10));
    expect((await reserveFails(b, 1, 1)).code).toBe("insufficient_credits");
    await sql.begin((tx) => releaseCredits(tx as unknown as Sql, first));
    const second = await job(b);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, b, second, "compress", 10, 10));
  }, 60_000);

  test("the ledger is per account: another account's usage does not count", async () => {
    const b = await account("starter", 0);
    await charged(a, 2000);
    const id = await job(b);
    await sql.begin((tx) => reserveCredits(tx as unknown as Sql, b, id, "compress", 2000, 2000));
    expect((await periodUsage(sql, b.id)).reservedInFlight).toBe(2000);
  }, 60_000);
});
