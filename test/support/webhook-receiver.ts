// A real webhook receiver for tests: Bun.serve on 127.0.0.1 (optionally TLS), recording every
// request with its raw body, answering per path (a status, or a custom handler), with waits.
import Stripe from "stripe";
import type { Sql } from "../../src/db/client";
import { recordEvent, type EventEnvelope, type EventType } from "../../src/events/record";

export interface Hit {
  at: number;
  path: string;
  headers: Record<string, string>;
  raw: string;
  json: any;
}

export type Answer = number | ((hit: Hit) => Response | Promise<Response>);

export function startReceiver(opts: { tls?: { cert: string; key: string } } = {}) {
  const hits: Hit[] = [];
  const answers = new Map<string, Answer>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    ...(opts.tls ? { tls: opts.tls } : {}),
    async fetch(req) {
      const url = new URL(req.url);
      const raw = await req.text();
      let json: any = null;
      try {
        json = JSON.parse(raw);
      } catch {}
      const hit: Hit = { at: Date.now(), path: url.pathname, headers: Object.fromEntries(req.headers), raw, json };
      hits.push(hit);
      const a = answers.get(url.pathname) ?? 200;
      return typeof a === "number"
        ? new Response(a >= 200 && a < 300 ? "ok" : "failing on purpose", { status: a })
        : a(hit);
    },
  });
  const origin = `${opts.tls ? "https" : "http"}://${opts.tls ? "localhost" : "127.0.0.1"}:${server.port}`;
  return {
    server,
    hits,
    /** URL of a path on this receiver; `answer` sets its response (default 200). */
    url(path: string, answer?: Answer) {
      if (answer !== undefined) answers.set(path, answer);
      return origin + path;
    },
    answer(path: string, a: Answer) {
      answers.set(path, a);
    },
    at(path: string) {
      return hits.filter((h) => h.path === path);
    },
    async waitFor(pred: (hits: Hit[]) => boolean, timeoutMs = 20_000, what = "receiver condition"): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pred(hits)) {
        if (Date.now() > deadline)
          throw new Error(
            `timed out waiting for ${what}; ${hits.length} hits: ${hits.map((h) => `${h.path}:${h.json?.type}`).join(", ")}`,
          );
        await Bun.sleep(25);
      }
    },
    stop() {
      server.stop(true);
    },
  };
}

/** Writes an event to the outbox exactly as the jobs and files modules do. */
export function emit(
  sql: unknown,
  accountId: string,
  mode: "test" | "live",
  type: EventType,
  object: unknown,
): Promise<EventEnvelope> {
  return recordEvent(sql as Sql, accountId, mode, type, object);
}

/** Verifies a received webhook with an independent implementation (stripe-node). */
export function verifyWithStripe(hit: Hit, secret: string) {
  return Stripe.webhooks.constructEventAsync(hit.raw, hit.headers["service-signature"]!, secret);
}

export async function until<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 2000)}`);
    await Bun.sleep(50);
  }
}
