// Per-key token bucket kept in Postgres, so every API node draws from the same bucket.
// Capacity = requests per minute; it refills continuously at capacity/60 tokens a second.
import { db } from "../db/client";
import { limits } from "../domain/pricing";
import type { Mode } from "../domain/scopes";
import { ApiError } from "../domain/errors";

export interface RateDecision {
  allowed: boolean;
  headers: Record<string, string>;
  /** Seconds until one token is available; only meaningful when refused. */
  retryAfterS: number;
}

export async function takeToken(keyId: string, mode: Mode): Promise<RateDecision> {
  const capacity = limits[mode].requests_per_minute;
  const perSecond = capacity / 60;
  // One statement: refill by the time elapsed, then take a token if a whole one is there.
  const [row] = await db()`
    WITH params AS (SELECT ${capacity}::float8 AS cap, ${perSecond}::float8 AS rate)
    INSERT INTO rate_buckets AS b (key_id, tokens, refilled_at, granted)
    SELECT ${keyId}, cap - 1, clock_timestamp(), true FROM params
    ON CONFLICT (key_id) DO UPDATE SET
      tokens = (SELECT CASE WHEN r >= 1 THEN r - 1 ELSE r END FROM (
                 SELECT LEAST(p.cap, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refilled_at) * p.rate) AS r FROM params p) x),
      granted = (SELECT LEAST(p.cap, b.tokens + EXTRACT(EPOCH FROM clock_timestamp() - b.refilled_at) * p.rate) >= 1 FROM params p),
      refilled_at = clock_timestamp()
    RETURNING tokens, granted`;
  const tokens = Number(row!.tokens);
  const allowed = row!.granted as boolean;
  const headers: Record<string, string> = {
    "x-ratelimit-limit": String(capacity),
    "x-ratelimit-remaining": String(Math.max(0, Math.floor(tokens))),
    "x-ratelimit-reset": String(Math.max(0, Math.ceil((capacity - tokens) / perSecond))),
  };
  return { allowed, headers, retryAfterS: Math.max(1, Math.ceil((1 - tokens) / perSecond)) };
}

export function rateLimitedError(decision: RateDecision): ApiError {
  return new ApiError(
    "rate_limited",
    "Too many requests for this key; retry after the number of seconds in Retry-After.",
    null,
    {},
    {
      "retry-after": String(decision.retryAfterS),
    },
  );
}
