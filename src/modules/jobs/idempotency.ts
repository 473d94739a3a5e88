// Idempotency-Key on POST /jobs (docs/api.md, Basics): scoped to the API key, kept 24 hours.
// The record is claimed in the transaction that creates the job, so it commits with the job or
// not at all: a request that fails or an API process killed mid-request leaves no record (the
// retry creates the job), and a concurrent retry waits on the record's row, then replays.
import { createHash } from "node:crypto";
import type { Queryable } from "../../db/client";
import { ApiError } from "../../domain/errors";

/** An in_progress record older than this is taken to be from a crashed request. */
const abandonAfterS = 60;

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

export function requestHash(body: unknown): string {
  return createHash("sha256").update(canonical(body)).digest("hex");
}

export type Claim = { kind: "new" } | { kind: "replay"; status: number; body: unknown };

/** Claims the key inside the caller's transaction `tx`. */
export async function claimIdempotencyKey(tx: Queryable, keyId: string, idemKey: string, hash: string): Promise<Claim> {
  {
    const inserted = await tx`
      INSERT INTO idempotency_records (key_id, idempotency_key, request_hash, state, expires_at)
      VALUES (${keyId}, ${idemKey}, ${hash}, 'in_progress', now() + interval '24 hours')
      ON CONFLICT DO NOTHING RETURNING key_id`;
    if (inserted.length) return { kind: "new" } as Claim;
    const [rec] = await tx`
      SELECT *, (expires_at <= now()) AS expired, (created_at < now() - make_interval(secs => ${abandonAfterS})) AS abandoned
        FROM idempotency_records WHERE key_id = ${keyId} AND idempotency_key = ${idemKey} FOR UPDATE`;
    if (!rec || rec.expired || (rec.state === "in_progress" && rec.abandoned)) {
      await tx`
        INSERT INTO idempotency_records (key_id, idempotency_key, request_hash, state, expires_at)
        VALUES (${keyId}, ${idemKey}, ${hash}, 'in_progress', now() + interval '24 hours')
        ON CONFLICT (key_id, idempotency_key) DO UPDATE SET request_hash = EXCLUDED.request_hash, state = 'in_progress',
          response_status = NULL, response_body = NULL, created_at = now(), expires_at = EXCLUDED.expires_at`;
      return { kind: "new" } as Claim;
    }
    if (rec.request_hash !== hash) {
      throw new ApiError(
        "idempotency_key_reused",
        "This Idempotency-Key was already used with a different request body; use a new key for a new request.",
        "Idempotency-Key",
      );
    }
    if (rec.state === "in_progress") {
      throw new ApiError(
        "idempotency_in_progress",
        "The original request with this Idempotency-Key is still being processed; retry shortly.",
        "Idempotency-Key",
        {},
        { "retry-after": "1" },
      );
    }
    return { kind: "replay", status: rec.response_status, body: rec.response_body } as Claim;
  }
}
