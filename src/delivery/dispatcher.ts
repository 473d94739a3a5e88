// The webhook dispatcher: claims due delivery attempts with FOR UPDATE SKIP LOCKED under a
// lease, sends each (deliver.ts), records the outcome on the attempt's row and schedules the
// next attempt after a failure. Several dispatchers may share one database: a row is in flight
// at one dispatcher at a time, and the rows of a dispatcher that died are retaken when their
// lease expires. Woken by NOTIFY webhooks (the fan-out trigger) and by its own retry timer.
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Sql } from "../db/client";
import { config } from "../config";
import { otherLimits } from "../domain/pricing";
import { log } from "../log";
import { attemptTimeoutMs, deliverOnce, type AttemptResult } from "./deliver";
import { openSecret } from "./secrets";

/** Longer than the longest attempt (resolution + connect + answer, all inside the 10 s timeout). */
export const leaseS = Math.ceil(attemptTimeoutMs / 1000) + 5;
export const maxAttempts = config.webhookRetryDelaysS.length + 1;
export const disableAfterFailures = otherLimits.webhook_disable_after_consecutive_failures;
const maxIdleMs = 5_000;
const minPollMs = 200;

/**
 * The body of every attempt of an event: the stored envelope with its fields in the spec's
 * order. A pure function of the stored row, so all six attempts send the same bytes.
 */
export function eventBody(payload: Record<string, unknown>): string {
  const { id, object, type, api_version, livemode, created_at, data, ...rest } = payload;
  return JSON.stringify({ id, object, type, api_version, livemode, created_at, data, ...rest });
}

export interface ClaimedAttempt {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
}

/**
 * Records how an attempt ended, in one transaction: the attempt's row, the next attempt (after a
 * failure, while attempts remain; webhook.test is never retried) and the endpoint's failure
 * streak, which disables the endpoint at 30. `lockedBy` guards against finishing an attempt whose
 * lease another dispatcher has since taken over. Returns false when the lease was lost.
 */
export async function recordOutcome(
  sql: Sql,
  row: ClaimedAttempt,
  result: AttemptResult,
  lockedBy: string,
): Promise<boolean> {
  return sql.begin(async (tx) => {
    const done = await tx`
      UPDATE webhook_deliveries
         SET status = ${result.ok ? "succeeded" : "failed"}, response_status = ${result.responseStatus},
             error = ${result.error}, duration_ms = ${result.durationMs}, locked_until = NULL
       WHERE id = ${row.id} AND status = 'in_flight' AND locked_by = ${lockedBy}
       RETURNING id`;
    if (!done.length) return false;
    if (result.ok) {
      await tx`UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = ${row.endpoint_id} AND consecutive_failures <> 0`;
      return true;
    }
    if (row.event_type !== "webhook.test" && row.attempt < maxAttempts) {
      const waitS = config.webhookRetryDelaysS[row.attempt - 1]!;
      await tx`
        INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, next_attempt_at)
        VALUES (${row.endpoint_id}, ${row.event_id}, ${row.event_type}, ${row.attempt + 1}, 'pending', now() + make_interval(secs => ${waitS}))
        ON CONFLICT (endpoint_id, event_id, attempt) DO NOTHING`;
    }
    const what = result.responseStatus !== null ? `HTTP ${result.responseStatus}` : (result.error ?? "error");
    const reason = `Disabled after ${disableAfterFailures} consecutive failed delivery attempts (the last: ${what}). Fix the endpoint, then PATCH it with enabled: true.`;
    const [ep] = await tx`
      UPDATE webhook_endpoints
         SET consecutive_failures = consecutive_failures + 1,
             enabled = enabled AND consecutive_failures + 1 < ${disableAfterFailures},
             disabled_reason = CASE WHEN enabled AND consecutive_failures + 1 >= ${disableAfterFailures} THEN ${reason} ELSE disabled_reason END,
             updated_at = CASE WHEN enabled AND consecutive_failures + 1 >= ${disableAfterFailures} THEN now() ELSE updated_at END
       WHERE id = ${row.endpoint_id}
       RETURNING enabled, consecutive_failures`;
    if (ep && !ep.enabled && ep.consecutive_failures === disableAfterFailures) {
      log.warn("webhook endpoint disabled", {
        endpoint_id: row.endpoint_id,
        consecutive_failures: ep.consecutive_failures,
      });
    }
    return true;
  });
}

interface DueAttempt extends ClaimedAttempt {
  url: string;
  secret_ciphertext: Buffer;
  secret_key_id: string;
  payload: Record<string, unknown> | null;
}

/** Claims up to `n` due attempts (pending and due, or in flight with an expired lease). */
async function claimDue(sql: Sql, lockedBy: string, n: number, busyEndpoints: string[]): Promise<DueAttempt[]> {
  const rows = await sql<DueAttempt[]>`
    WITH due AS (
      SELECT d.id, e.url, e.secret_ciphertext, e.secret_key_id, ev.payload
        FROM webhook_deliveries d
        JOIN webhook_endpoints e ON e.id = d.endpoint_id
        LEFT JOIN events ev ON ev.id = d.event_id
       WHERE ((d.status = 'pending' AND d.next_attempt_at <= now()) OR (d.status = 'in_flight' AND d.locked_until <= now()))
         AND e.enabled AND e.deleted_at IS NULL
         AND d.endpoint_id <> ALL (${busyEndpoints}::uuid[])
       ORDER BY d.next_attempt_at
       LIMIT ${n}
       FOR UPDATE OF d SKIP LOCKED
    )
    UPDATE webhook_deliveries d
       SET status = 'in_flight', locked_until = now() + make_interval(secs => ${leaseS}), locked_by = ${lockedBy}, attempted_at = now()
      FROM due
     WHERE d.id = due.id
    RETURNING d.id, d.endpoint_id, d.event_id, d.event_type, d.attempt, due.url, due.secret_ciphertext, due.secret_key_id, due.payload`;
  return rows;
}

async function msUntilNextDue(sql: Sql): Promise<number> {
  const [r] = await sql`
    SELECT GREATEST(0, EXTRACT(EPOCH FROM (min(t) - now())) * 1000)::float8 AS ms FROM (
      (SELECT d.next_attempt_at AS t FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.status = 'pending' AND e.enabled AND e.deleted_at IS NULL ORDER BY d.next_attempt_at LIMIT 1)
      UNION ALL
      (SELECT locked_until FROM webhook_deliveries WHERE status = 'in_flight' ORDER BY locked_until LIMIT 1)
    ) x`;
  return r?.ms === null || r?.ms === undefined ? maxIdleMs : Number(r.ms);
}

export interface WebhookDispatcher {
  stop(): Promise<void>;
}

export async function startWebhookDispatcher(
  sql: Sql,
  opts: { concurrency?: number; perEndpoint?: number } = {},
): Promise<WebhookDispatcher> {
  const concurrency = opts.concurrency ?? 8;
  const perEndpoint = opts.perEndpoint ?? 4;
  const me = `${hostname()}:${config.workerName ?? "dispatcher"}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const active = new Map<string, { endpointId: string; abort: AbortController; done: Promise<void> }>();
  let stopping = false;
  // `woken` remembers a wake-up that arrived while the loop was busy, so none is lost.
  let woken = false;
  let wakeUp: (() => void) | null = null;
  const wake = () => {
    woken = true;
    const w = wakeUp;
    wakeUp = null;
    w?.();
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) return resolve();
      const t = setTimeout(() => {
        wakeUp = null;
        resolve();
      }, ms);
      wakeUp = () => {
        clearTimeout(t);
        resolve();
      };
    });

  async function run(row: DueAttempt, abort: AbortController) {
    let result: AttemptResult;
    if (!row.payload) {
      result = { ok: false, responseStatus: null, error: "the event no longer exists", durationMs: 0, address: null };
    } else {
      let secret: string | null = null;
      try {
        secret = await openSecret(sql, row.endpoint_id, {
          ciphertext: row.secret_ciphertext,
          keyId: row.secret_key_id,
        });
      } catch (e) {
        log.error("webhook secret unavailable", { endpoint_id: row.endpoint_id, error: (e as Error).message });
      }
      result = secret
        ? await deliverOnce({
            url: row.url,
            secret,
            eventType: row.event_type,
            body: eventBody(row.payload),
            signal: abort.signal,
          })
        : {
            ok: false,
            responseStatus: null,
            error: "the service could not decrypt the endpoint secret",
            durationMs: 0,
            address: null,
          };
    }
    if (result.aborted) {
      // Shutting down mid-attempt: hand the attempt back, due now, for another dispatcher.
      await sql`UPDATE webhook_deliveries SET status = 'pending', locked_until = NULL, locked_by = NULL, next_attempt_at = now()
                 WHERE id = ${row.id} AND status = 'in_flight' AND locked_by = ${me}`;
      return;
    }
    if (!(await recordOutcome(sql, row, result, me)))
      log.warn("webhook attempt finished after its lease was taken over", { delivery_id: row.id });
  }

  function start(row: DueAttempt) {
    const abort = new AbortController();
    const done = run(row, abort)
      .catch((e) =>
        log.error("webhook attempt failed to record", {
          delivery_id: row.id,
          error: String((e as Error)?.message ?? e),
        }),
      )
      .finally(() => {
        active.delete(row.id);
        wake();
      });
    active.set(row.id, { endpointId: row.endpoint_id, abort, done });
  }

  async function loop() {
    while (!stopping) {
      try {
        woken = false;
        const free = concurrency - active.size;
        if (free > 0) {
          const perEp = new Map<string, number>();
          for (const a of active.values()) perEp.set(a.endpointId, (perEp.get(a.endpointId) ?? 0) + 1);
          const busy = [...perEp].filter(([, n]) => n >= perEndpoint).map(([id]) => id);
          const claimed = await claimDue(sql, me, Math.min(free, perEndpoint), busy);
          for (const row of claimed) start(row);
          if (claimed.length > 0 && !stopping) continue;
        }
        if (stopping) break;
        // Due rows we could not claim belong to busy endpoints or are being claimed by a peer:
        // wait a little (an attempt finishing wakes us sooner) instead of spinning.
        await sleep(free > 0 ? Math.min(maxIdleMs, Math.max(minPollMs, await msUntilNextDue(sql))) : maxIdleMs);
      } catch (e) {
        if (stopping) break;
        log.warn("webhook dispatcher loop error; retrying", { error: String((e as Error)?.message ?? e) });
        await sleep(1000);
      }
    }
  }

  const sub = await sql.listen("webhooks", () => wake());
  const looping = loop();
  return {
    async stop() {
      stopping = true;
      wake();
      await sub.unlisten().catch(() => {});
      await looping;
      // Let quick attempts finish; hand the slow ones back rather than hold up shutdown.
      const all = Promise.all([...active.values()].map((a) => a.done));
      const finished = await Promise.race([all.then(() => true), Bun.sleep(2_000).then(() => false)]);
      if (!finished) for (const a of active.values()) a.abort.abort();
      await all;
    },
  };
}
