// Webhook endpoints over the database: URL rules (scheme per mode, public targets only), the
// 10-per-mode limit, sealed secrets, the delivery log, and the synchronous test event.
import { randomUUID } from "node:crypto";
import { db } from "../../db/client";
import { config } from "../../config";
import { ApiError } from "../../domain/errors";
import { assertOwned } from "../common/ownership";
import { listPage } from "../common/pagination";
import type { AuthenticatedKey } from "../../auth/authenticate";
import { otherLimits } from "../../domain/pricing";
import { recordEvent, type EventType } from "../../events/record";
import { generateEndpointSecret, openSecret, sealSecret } from "../../delivery/secrets";
import { TargetRefused, bareHost, resolveTarget } from "../../delivery/ssrf-guard";
import { deliverOnce } from "../../delivery/deliver";
import { eventBody, leaseS, recordOutcome } from "../../delivery/dispatcher";

type Row = Record<string, any>;

const endpointLimit = otherLimits.webhook_endpoints_per_mode;
const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentEndpoint(r: Row) {
  return {
    id: r.id as string,
    object: "webhook_endpoint" as const,
    url: r.url as string,
    description: (r.description ?? null) as string | null,
    events: r.events as EventType[],
    enabled: r.enabled as boolean,
    disabled_reason: (r.disabled_reason ?? null) as string | null,
    livemode: r.mode === "live",
    created_at: (r.created_at as Date).toISOString(),
    updated_at: (r.updated_at as Date).toISOString(),
  };
}

export function presentDelivery(r: Row, mode: string) {
  return {
    id: r.id as string,
    object: "webhook_delivery" as const,
    webhook_id: r.endpoint_id as string,
    event_id: r.event_id as string,
    event_type: r.event_type as string,
    attempt: r.attempt as number,
    status: r.status as "pending" | "in_flight" | "succeeded" | "failed",
    response_status: (r.response_status ?? null) as number | null,
    error: (r.error ?? null) as string | null,
    duration_ms: (r.duration_ms ?? null) as number | null,
    livemode: mode === "live",
    created_at: (r.created_at as Date).toISOString(),
    attempted_at: r.status === "pending" ? null : iso(r.attempted_at),
    next_attempt_at: r.status === "pending" ? iso(r.next_attempt_at) : null,
  };
}

/**
 * Checks a webhook URL and returns its normalized form: http(s) only, https for live keys, no
 * credentials, at most 2,048 characters, and a host that resolves only to public addresses
 * (unless WEBHOOK_ALLOW_PRIVATE_TARGETS=1).
 */
export async function checkWebhookUrl(raw: string, mode: string): Promise<string> {
  const bad = (msg: string) => new ApiError("validation_error", `\`url\`: ${msg}`, "url");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad("not an absolute URL.");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw bad("must use https (or http with a sandbox key).");
  if (mode === "live" && url.protocol !== "https:")
    throw bad("live-mode webhooks must use https; http is allowed with sandbox (svk_test_) keys only.");
  if (url.username || url.password)
    throw bad("must not contain credentials; authenticate deliveries by their signature instead.");
  if (!url.hostname) throw bad("has no host.");
  if (url.href.length > otherLimits.webhook_url_max_chars)
    throw bad(`longer than ${otherLimits.webhook_url_max_chars} characters once normalized.`);
  if (!config.webhookAllowPrivateTargets) {
    try {
      await resolveTarget(bareHost(url));
    } catch (e) {
      if (e instanceof TargetRefused) throw bad(`${e.message}.`);
      throw e;
    }
  }
  return url.href;
}

async function loadEndpoint(auth: AuthenticatedKey, id: string): Promise<Row> {
  const [row] = await db()`SELECT * FROM webhook_endpoints WHERE id = ${id}`;
  return assertOwned(
    row && !row.deleted_at ? (row as Row & { account_id: string; mode: string }) : undefined,
    auth,
    "webhook endpoint",
    "webhook_id",
  );
}

export async function createEndpoint(
  auth: AuthenticatedKey,
  body: { url: string; events?: EventType[] | null; description?: string | null },
) {
  const url = await checkWebhookUrl(body.url, auth.mode);
  const id = randomUUID();
  const secret = generateEndpointSecret();
  const sealed = await sealSecret(db(), id, secret);
  const row = await db().begin(async (tx) => {
    // Serialize creations per account and mode so the limit holds under concurrent requests.
    await tx`SELECT pg_advisory_xact_lock(hashtext('webhook_endpoints'), hashtext(${auth.account.id + ":" + auth.mode}))`;
    const [{ n }] = await tx<[{ n: number }]>`SELECT count(*)::int AS n FROM webhook_endpoints
                               WHERE account_id = ${auth.account.id} AND mode = ${auth.mode} AND deleted_at IS NULL`;
    if (n >= endpointLimit) {
      throw new ApiError(
        "webhook_limit_reached",
        `This ${auth.mode === "live" ? "live" : "sandbox"} mode already has ${endpointLimit} webhook endpoints, the maximum; delete one first.`,
      );
    }
    const [r] = await tx`
      INSERT INTO webhook_endpoints (id, account_id, mode, url, description, events, secret_ciphertext, secret_key_id)
      VALUES (${id}, ${auth.account.id}, ${auth.mode}, ${url}, ${body.description ?? null}, ${body.events ?? []}, ${sealed.ciphertext}, ${sealed.keyId})
      RETURNING *`;
    return r!;
  });
  return { ...presentEndpoint(row), secret };
}

export async function listEndpoints(auth: AuthenticatedKey) {
  const rows =
    await db()`SELECT * FROM webhook_endpoints WHERE account_id = ${auth.account.id} AND mode = ${auth.mode} AND deleted_at IS NULL
                          ORDER BY created_at DESC, id DESC`;
  // At most 10 endpoints per mode: one page always holds them all.
  return listPage(rows, rows.length, presentEndpoint);
}

export async function getEndpoint(auth: AuthenticatedKey, id: string) {
  return presentEndpoint(await loadEndpoint(auth, id));
}

export async function updateEndpoint(
  auth: AuthenticatedKey,
  id: string,
  body: { url?: string | null; description?: string | null; events?: EventType[] | null; enabled?: boolean | null },
) {
  await loadEndpoint(auth, id);
  const url = body.url != null ? await checkWebhookUrl(body.url, auth.mode) : null;
  const sql = db();
  const [row] = await sql`
    UPDATE webhook_endpoints SET
      url = COALESCE(${url}, url),
      description = CASE WHEN ${body.description !== undefined} THEN ${body.description ?? null} ELSE description END,
      events = COALESCE(${body.events ?? null}::text[], events),
      enabled = COALESCE(${body.enabled ?? null}::boolean, enabled),
      disabled_reason = CASE WHEN ${body.enabled === true} THEN NULL ELSE disabled_reason END,
      consecutive_failures = CASE WHEN ${body.enabled === true} THEN 0 ELSE consecutive_failures END,
      updated_at = now()
    WHERE id = ${id} AND deleted_at IS NULL
    RETURNING *`;
  if (!row) throw new ApiError("not_found", "No such webhook endpoint.", "webhook_id");
  // Attempts parked while the endpoint was disabled are due again: wake the dispatchers.
  if (body.enabled === true) await sql`SELECT pg_notify('webhooks', '')`;
  return presentEndpoint(row);
}

export async function deleteEndpoint(auth: AuthenticatedKey, id: string) {
  await loadEndpoint(auth, id);
  await db().begin(async (tx) => {
    // The secret is destroyed with the endpoint; attempts not yet made are dropped.
    await tx`UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, secret_ciphertext = '\\x'::bytea, updated_at = now()
              WHERE id = ${id} AND deleted_at IS NULL`;
    await tx`DELETE FROM webhook_deliveries WHERE endpoint_id = ${id} AND status = 'pending'`;
  });
  return { id, object: "webhook_endpoint" as const, deleted: true as const };
}

export async function listDeliveries(auth: AuthenticatedKey, id: string, limit: number) {
  await loadEndpoint(auth, id);
  const rows = await db()`SELECT * FROM webhook_deliveries WHERE endpoint_id = ${id}
                          ORDER BY created_at DESC, attempt DESC, id DESC LIMIT ${limit + 1}`;
  return listPage(rows, limit, (r) => presentDelivery(r, auth.mode));
}

/**
 * POST /webhooks/{id}/test: a signed webhook.test event, sent now and recorded as one attempt
 * (never retried), to this endpoint only, and only if it subscribes to webhook.test (an empty
 * subscription includes it). Its data.object is the endpoint itself.
 */
export async function sendTestEvent(auth: AuthenticatedKey, id: string, requestId: string) {
  const ep = await loadEndpoint(auth, id);
  const events = ep.events as string[];
  if (events.length > 0 && !events.includes("webhook.test")) {
    throw new ApiError(
      "webhook_not_subscribed",
      "This endpoint's `events` leave out `webhook.test`, so it does not receive test events; add `webhook.test` (or set `events` to [] for all types) first.",
    );
  }
  const sql = db();
  const event = await recordEvent(sql, auth.account.id, auth.mode, "webhook.test", presentEndpoint(ep));
  const lockedBy = `api:${requestId}`;
  const [claimed] = await sql`
    INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, next_attempt_at, locked_until, locked_by, attempted_at)
    VALUES (${id}, ${event.id}, ${event.type}, 1, 'in_flight', now(), now() + make_interval(secs => ${leaseS}), ${lockedBy}, now())
    RETURNING id, endpoint_id, event_id, event_type, attempt`;
  const secret = await openSecret(sql, id, { ciphertext: ep.secret_ciphertext, keyId: ep.secret_key_id });
  const result = await deliverOnce({
    url: ep.url,
    secret,
    eventType: event.type,
    body: eventBody(event as unknown as Record<string, unknown>),
  });
  await recordOutcome(sql, claimed as never, result, lockedBy);
  const [row] = await sql`SELECT * FROM webhook_deliveries WHERE id = ${claimed!.id}`;
  const delivery = presentDelivery(row!, auth.mode);
  if (!result.ok) {
    const why =
      result.responseStatus !== null
        ? `answered HTTP ${result.responseStatus}${result.error ? ` (${result.error})` : ""}`
        : `could not be reached: ${result.error}`;
    throw new ApiError(
      "webhook_delivery_failed",
      `The endpoint did not accept the test event: it ${why}. The attempt is in the delivery log.`,
      null,
      { delivery },
    );
  }
  return delivery;
}
