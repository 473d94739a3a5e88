// The retry policy (stripe-node's, honouring Retry-After) with a scripted fetch: which answers are
// retried, how long each wait is, and that every attempt sends the same request (same key).
import { describe, expect, test } from "bun:test";
import { backoffMs, defaultRetryPolicy, retryingFetch, type FetchLike } from "../src/retry";
import { ConnectionError } from "../src/errors";

function scripted(answers: (Response | Error)[]) {
  const seen: { key: string | null; body: string }[] = [];
  const base: FetchLike = async (req) => {
    seen.push({ key: req.headers.get("idempotency-key"), body: await req.text() });
    const a = answers.shift()!;
    if (a instanceof Error) throw a;
    return a;
  };
  const waits: number[] = [];
  const send = retryingFetch(base, defaultRetryPolicy, async (ms) => void waits.push(ms));
  const req = () =>
    new Request("http://x/api/v1/jobs", {
      method: "POST",
      headers: { "idempotency-key": "k1" },
      body: '{"operation":"rotate"}',
    });
  return { seen, waits, send, req };
}
const envelope = (status: number, code: string, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify({ error: { type: "x", code, message: "m" } }), { status, headers });

describe("retryingFetch", () => {
  test("a 503 and a network error are retried with the same request and key, then the answer is returned", async () => {
    const s = scripted([
      envelope(503, "queue_unavailable", { "retry-after": "2" }),
      new TypeError("fetch failed"),
      new Response("{}", { status: 202 }),
    ]);
    const res = await s.send(s.req());
    expect(res.status).toBe(202);
    expect(s.seen).toEqual(Array(3).fill({ key: "k1", body: '{"operation":"rotate"}' }));
    expect(s.waits[0]).toBeGreaterThanOrEqual(2000); // Retry-After: 2 beats the 0.5 s backoff
    expect(s.waits[1]).toBeGreaterThanOrEqual(500);
    expect(s.waits[1]).toBeLessThanOrEqual(1000);
  });

  test("a 429 with Retry-After above 60 s is not waited out; 422 and 409 job_not_finished are not retried", async () => {
    for (const r of [
      envelope(429, "rate_limited", { "retry-after": "120" }),
      envelope(422, "invalid_options"),
      envelope(409, "job_not_finished"),
    ]) {
      const s = scripted([r, new Response("{}")]);
      expect((await s.send(s.req())).status).toBe(r.status);
      expect(s.seen).toHaveLength(1);
    }
  });

  test("409 idempotency_in_progress is retried; after maxNetworkRetries the last answer (or a ConnectionError) is returned", async () => {
    const s = scripted([
      envelope(409, "idempotency_in_progress"),
      envelope(429, "rate_limited"),
      envelope(429, "rate_limited"),
      new Response("{}"),
    ]);
    expect((await s.send(s.req())).status).toBe(429);
    expect(s.seen).toHaveLength(3);
    const n = scripted([new TypeError("a"), new TypeError("b"), new TypeError("c")]);
    expect(await n.send(n.req()).catch((e) => e)).toBeInstanceOf(ConnectionError);
  });

  test("backoff doubles from 0.5 s to at most 5 s, jittered to 50-100 % but never below 0.5 s", () => {
    for (let retry = 1; retry <= 6; retry++) {
      const cap = Math.min(500 * 2 ** (retry - 1), 5000);
      for (let i = 0; i < 50; i++) {
        const ms = backoffMs(retry, defaultRetryPolicy, null);
        expect(ms).toBeGreaterThanOrEqual(Math.max(500, cap / 2));
        expect(ms).toBeLessThanOrEqual(cap);
      }
    }
  });
});
