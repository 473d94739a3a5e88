// The token bucket's arithmetic (src/http/rate-limit.ts). The bucket is one SQL statement, so
// this runs it on a fresh database and simulates time by moving `refilled_at` into the past,
// instead of sleeping: capacity, continuous refill at limit/60 per second, the cap, and the
// X-RateLimit-* / Retry-After values.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createDatabase } from "../support/service";
import { connect, disconnect, type Sql } from "../../src/db/client";
import { migrate } from "../../src/db/migrate";
import { rateLimitedError, takeToken } from "../../src/http/rate-limit";
import { createAccount, createKey } from "../../src/admin/commands";

setDefaultTimeout(30_000);

let database: Awaited<ReturnType<typeof createDatabase>>;
let sql: Sql;

beforeAll(async () => {
  database = await createDatabase();
  sql = connect(database.url, 4);
  await migrate(sql);
});
afterAll(async () => {
  await disconnect();
  await database?.drop();
});

let n = 0;
async function newKey(mode: "test" | "live") {
  const a = await createAccount(sql, `rl${++n}-${Date.now()}@example.com`);
  return (await createKey(sql, a.id, mode)).id;
}

/** Pretends `seconds` passed since the bucket's last refill. */
async function age(keyId: string, seconds: number) {
  await sql`UPDATE rate_buckets SET refilled_at = refilled_at - make_interval(secs => ${seconds}) WHERE key_id = ${keyId}`;
}
async function setTokens(keyId: string, tokens: number) {
  await sql`UPDATE rate_buckets SET tokens = ${tokens}, refilled_at = clock_timestamp() WHERE key_id = ${keyId}`;
}

describe("takeToken", () => {
  test("a new sandbox bucket holds 30 tokens: the first request leaves 29", async () => {
    const d = await takeToken(await newKey("test"), "test");
    expect(d.allowed).toBe(true);
    expect(d.headers["x-ratelimit-limit"]).toBe("30");
    expect(d.headers["x-ratelimit-remaining"]).toBe("29");
    // One token short of full, at 0.5 tokens/s: 2 s to refill.
    expect(d.headers["x-ratelimit-reset"]).toBe("2");
  });

  test("a new live bucket holds 60 tokens and refills one per second", async () => {
    const d = await takeToken(await newKey("live"), "live");
    expect(d.headers).toMatchObject({
      "x-ratelimit-limit": "60",
      "x-ratelimit-remaining": "59",
      "x-ratelimit-reset": "1",
    });
  });

  test("exactly 30 sandbox requests are granted back to back; the 31st is refused with Retry-After 2", async () => {
    const key = await newKey("test");
    const decisions = [];
    for (let i = 0; i < 31; i++) decisions.push(await takeToken(key, "test"));
    expect(decisions.slice(0, 30).every((d) => d.allowed)).toBe(true);
    expect(decisions.slice(0, 30).map((d) => Number(d.headers["x-ratelimit-remaining"]))).toEqual(
      Array.from({ length: 30 }, (_, i) => 29 - i),
    );
    const last = decisions[30]!;
    expect(last.allowed).toBe(false);
    expect(last.headers["x-ratelimit-remaining"]).toBe("0");
    expect(last.headers["x-ratelimit-reset"]).toBe("60");
    expect(last.retryAfterS).toBe(2);
    // A refused request does not consume anything.
    const [row] = await sql`SELECT tokens FROM rate_buckets WHERE key_id = ${key}`;
    expect(Number(row!.tokens)).toBeLessThan(0.1);
    expect(Number(row!.tokens)).toBeGreaterThanOrEqual(0);
  });

  test("tokens refill continuously at limit/60 per second", async () => {
    const key = await newKey("test");
    await takeToken(key, "test");
    await setTokens(key, 0);
    await age(key, 10); // 10 s at 0.5/s = 5 tokens, minus the one taken now
    const d = await takeToken(key, "test");
    expect(d.allowed).toBe(true);
    expect(d.headers["x-ratelimit-remaining"]).toBe("4");
    const live = await newKey("live");
    await takeToken(live, "live");
    await setTokens(live, 0);
    await age(live, 7); // 7 s at 1/s = 7 tokens
    expect((await takeToken(live, "live")).headers["x-ratelimit-remaining"]).toBe("6");
  });

  test("refill never exceeds the capacity", async () => {
    const key = await newKey("test");
    await takeToken(key, "test");
    await age(key, 3600);
    const d = await takeToken(key, "test");
    expect(d.headers["x-ratelimit-remaining"]).toBe("29");
  });

  test("Retry-After is the time until one whole token", async () => {
    const key = await newKey("test");
    await takeToken(key, "test");
    await setTokens(key, 0.75); // needs 0.25 more at 0.5/s: 0.5 s, rounded up to 1
    const d = await takeToken(key, "test");
    expect(d.allowed).toBe(false);
    expect(d.retryAfterS).toBe(1);
    await setTokens(key, 0);
    expect((await takeToken(key, "test")).retryAfterS).toBe(2);
  });

  test("a partly empty bucket reports the seconds until it is full again", async () => {
    const key = await newKey("live");
    await takeToken(key, "live");
    await setTokens(key, 31); // one taken -> 30 left, 30 missing at 1/s
    const d = await takeToken(key, "live");
    expect(d.headers["x-ratelimit-remaining"]).toBe("30");
    expect(d.headers["x-ratelimit-reset"]).toBe("30");
  });

  test("concurrent requests for one key are serialised: never more grants than tokens", async () => {
    const key = await newKey("test");
    const decisions = await Promise.all(Array.from({ length: 45 }, () => takeToken(key, "test")));
    const granted = decisions.filter((d) => d.allowed).length;
    // 30 tokens, plus at most a token's refill while the 45 statements ran.
    expect(granted).toBeGreaterThanOrEqual(30);
    expect(granted).toBeLessThanOrEqual(31);
  });

  test("buckets are per key", async () => {
    const a = await newKey("test");
    const b = await newKey("test");
    for (let i = 0; i < 30; i++) await takeToken(a, "test");
    expect((await takeToken(a, "test")).allowed).toBe(false);
    expect((await takeToken(b, "test")).headers["x-ratelimit-remaining"]).toBe("29");
  });
});

describe("rateLimitedError", () => {
  test("is a 429 rate_limited error with Retry-After", () => {
    const e = rateLimitedError({ allowed: false, headers: {}, retryAfterS: 2 });
    expect(e.code).toBe("rate_limited");
    expect(e.status).toBe(429);
    expect(e.headers).toEqual({ "retry-after": "2" });
  });
});
