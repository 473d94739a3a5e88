// Webhooks over real HTTP: the endpoints API, signed deliveries to a real receiver, retries,
// the delivery log, disabling after 30 failures, mode partitioning, limits, scopes, validation.
// Two worker processes run dispatchers against the database, so every "exactly N" below also
// shows that no attempt is sent twice by concurrent dispatchers.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { client, expectEnvelope, startService, type Service } from "../support/service";
import { emit, startReceiver, until, verifyWithStripe } from "../support/webhook-receiver";
import { makeLocalhostCert, type LocalhostCert } from "../support/localhost-cert";
import { createKey } from "../../src/admin/commands";

// Real services on a busy 2-core machine: generous limits (bun test defaults to 5 s).
setDefaultTimeout(90_000);

const allTypes = ["job.succeeded", "job.failed", "job.cancelled", "file.expired", "webhook.test"];
const endpointKeys = [
  "created_at",
  "description",
  "disabled_reason",
  "enabled",
  "events",
  "id",
  "livemode",
  "object",
  "updated_at",
  "url",
];

let svc: Service;
let tls: LocalhostCert;
const rx = startReceiver();
let rxs: ReturnType<typeof startReceiver>; // https receiver for live mode

beforeAll(async () => {
  // A self-signed certificate for "localhost", trusted by the service through NODE_EXTRA_CA_CERTS,
  // so live-mode (https only) deliveries run against a real TLS receiver.
  tls = makeLocalhostCert("webhooks");
  rxs = startReceiver({ tls });
  svc = await startService({
    workers: 2,
    env: { WEBHOOK_RETRY_DELAYS_S: "1,1,1,1,1", NODE_EXTRA_CA_CERTS: tls.certPath },
  });
});

afterAll(async () => {
  rx.stop();
  rxs?.stop();
  await svc?.stop();
  tls?.remove();
});

async function account(mode: "test" | "live" = "test") {
  const k = await svc.newKey({ mode });
  return { ...k, api: client(svc.baseUrl, k.key) };
}
async function keyFor(accountId: string, mode: "test" | "live", scopes?: string[]) {
  return client(svc.baseUrl, (await createKey(svc.sql as never, accountId, mode, scopes)).key);
}
async function deliveries(api: ReturnType<typeof client>, id: string, limit = 100) {
  const r = await api("GET", `/webhooks/${id}/deliveries?limit=${limit}`);
  expect(r.status).toBe(200);
  return r.json.data as any[];
}

describe("webhook endpoints API", () => {
  test("POST /webhooks answers 201 with a whsec_ secret, which no other response ever shows", async () => {
    const { api } = await account();
    const r = await api("POST", "/webhooks", {
      url: rx.url("/create"),
      description: "orders",
      events: ["job.succeeded"],
    });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual([...endpointKeys, "secret"].sort());
    expect(r.json).toMatchObject({
      object: "webhook_endpoint",
      url: rx.url("/create"),
      description: "orders",
      events: ["job.succeeded"],
      enabled: true,
      disabled_reason: null,
      livemode: false,
    });
    expect(r.json.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.json.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    const id = r.json.id;
    const others = [
      await api("GET", `/webhooks/${id}`),
      await api("GET", "/webhooks"),
      await api("PATCH", `/webhooks/${id}`, { description: "x" }),
    ];
    for (const o of others) {
      expect(o.status).toBe(200);
      expect(o.text).not.toContain(r.json.secret);
      expect(o.text).not.toContain("secret");
    }
    expect(Object.keys(others[0]!.json).sort()).toEqual(endpointKeys);
  });

  test("the secret is stored encrypted (AES-256-GCM), never in clear, and never logged", async () => {
    const { api } = await account();
    const r = await api("POST", "/webhooks", { url: rx.url("/enc") });
    const [row] = await svc.sql`SELECT * FROM webhook_endpoints WHERE id = ${r.json.id}`;
    const secret = r.json.secret as string;
    expect(Buffer.from(row!.secret_ciphertext).includes(Buffer.from(secret))).toBe(false);
    expect(JSON.stringify(row)).not.toContain(secret.slice(6));
    expect(Buffer.from(row!.secret_ciphertext).length).toBe(12 + 16 + secret.length);
    const [key] = await svc.sql`SELECT count(*)::int AS n FROM server_secrets WHERE name = 'webhook_secret_key'`;
    expect(key!.n).toBe(1);
    expect(svc.logs()).not.toContain(secret);
  });

  test("GET /webhooks lists the mode's endpoints in the list envelope, newest first", async () => {
    const { api } = await account();
    const a = await api("POST", "/webhooks", { url: rx.url("/l1") });
    const b = await api("POST", "/webhooks", { url: rx.url("/l2") });
    const r = await api("GET", "/webhooks");
    expect(r.status).toBe(200);
    expect(r.json.object).toBe("list");
    expect(r.json.has_more).toBe(false);
    expect(r.json.data.map((e: any) => e.id)).toEqual([b.json.id, a.json.id]);
  });

  test("PATCH changes url, description, events; null leaves url, events and enabled alone and clears description", async () => {
    const { api } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/p1"), description: "d", events: ["job.failed"] });
    const id = c.json.id;
    let r = await api("PATCH", `/webhooks/${id}`, {
      url: rx.url("/p2"),
      description: "new",
      events: ["job.succeeded", "file.expired"],
    });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      url: rx.url("/p2"),
      description: "new",
      events: ["job.succeeded", "file.expired"],
      enabled: true,
    });
    expect(Date.parse(r.json.updated_at)).toBeGreaterThanOrEqual(Date.parse(c.json.updated_at));
    r = await api("PATCH", `/webhooks/${id}`, { url: null, description: null, events: null, enabled: null });
    expect(r.json).toMatchObject({
      url: rx.url("/p2"),
      description: null,
      events: ["job.succeeded", "file.expired"],
      enabled: true,
    });
    r = await api("PATCH", `/webhooks/${id}`, { enabled: false });
    expect(r.json).toMatchObject({ enabled: false, disabled_reason: null });
    r = await api("PATCH", `/webhooks/${id}`, { events: [] });
    expect(r.json.events).toEqual([]);
    r = await api("PATCH", `/webhooks/${id}`, {});
    expect(r.status).toBe(200);
    expect((await api("GET", `/webhooks/${id}`)).json).toMatchObject({
      url: rx.url("/p2"),
      enabled: false,
      events: [],
    });
  });

  test("DELETE answers 200 {id, object, deleted}; the endpoint is then 404 everywhere", async () => {
    const { api } = await account();
    const id = (await api("POST", "/webhooks", { url: rx.url("/del") })).json.id;
    const r = await api("DELETE", `/webhooks/${id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id, object: "webhook_endpoint", deleted: true });
    expectEnvelope(await api("GET", `/webhooks/${id}`), 404, "not_found");
    expectEnvelope(await api("PATCH", `/webhooks/${id}`, { enabled: true }), 404, "not_found");
    expectEnvelope(await api("DELETE", `/webhooks/${id}`), 404, "not_found");
    expectEnvelope(await api("POST", `/webhooks/${id}/test`), 404, "not_found");
    expectEnvelope(await api("GET", `/webhooks/${id}/deliveries`), 404, "not_found");
    expect((await api("GET", "/webhooks")).json.data).toEqual([]);
  });

  test("at most 10 endpoints per mode: the 11th is 409 webhook_limit_reached; the other mode and deletion free room", async () => {
    const { api, accountId } = await account();
    const ids = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api("POST", "/webhooks", { url: rx.url(`/limit${i}`) }).then((r) => (expect(r.status).toBe(201), r.json.id)),
      ),
    );
    const over = expectEnvelope(
      await api("POST", "/webhooks", { url: rx.url("/limit10") }),
      409,
      "webhook_limit_reached",
    );
    expect(over.type).toBe("conflict_error");
    expect((await api("GET", "/webhooks")).json.data).toHaveLength(10);
    const live = await keyFor(accountId, "live");
    expect((await live("POST", "/webhooks", { url: `https://localhost:1/live` })).status).toBe(201);
    await api("DELETE", `/webhooks/${ids[0]}`);
    expect((await api("POST", "/webhooks", { url: rx.url("/limit11") })).status).toBe(201);
  });

  test("the 10-endpoint limit holds under concurrent creation", async () => {
    const { api } = await account();
    const rs = await Promise.all(
      Array.from({ length: 14 }, (_, i) => api("POST", "/webhooks", { url: rx.url(`/race${i}`) })),
    );
    expect(rs.filter((r) => r.status === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.status === 409)).toHaveLength(4);
  });

  test("every webhook route needs the webhooks:manage scope (403 insufficient_scope)", async () => {
    const { api, accountId } = await account();
    const id = (await api("POST", "/webhooks", { url: rx.url("/scope") })).json.id;
    const weak = await keyFor(accountId, "test", [
      "documents:read",
      "documents:write",
      "jobs:read",
      "jobs:write",
      "usage:read",
    ]);
    const calls: [string, string, unknown?][] = [
      ["POST", "/webhooks", { url: rx.url("/scope2") }],
      ["GET", "/webhooks"],
      ["GET", `/webhooks/${id}`],
      ["PATCH", `/webhooks/${id}`, { enabled: false }],
      ["DELETE", `/webhooks/${id}`],
      ["POST", `/webhooks/${id}/test`],
      ["GET", `/webhooks/${id}/deliveries`],
    ];
    for (const [m, p, b] of calls) {
      const e = expectEnvelope(await weak(m, p, b), 403, "insufficient_scope");
      expect(e.param).toBe("webhooks:manage");
    }
    expect(rx.at("/scope")).toHaveLength(0);
    expectEnvelope(await client(svc.baseUrl)("GET", "/webhooks"), 401, "authentication_required");
  });

  test("webhooks are partitioned per mode: the other mode's endpoint is 403 mode_mismatch, another account's is 404", async () => {
    const { api, accountId } = await account();
    const id = (await api("POST", "/webhooks", { url: rx.url("/mode") })).json.id;
    const live = await keyFor(accountId, "live");
    const stranger = (await account()).api;
    const calls: [string, string, unknown?][] = [
      ["GET", `/webhooks/${id}`],
      ["PATCH", `/webhooks/${id}`, { description: "x" }],
      ["DELETE", `/webhooks/${id}`],
      ["POST", `/webhooks/${id}/test`],
      ["GET", `/webhooks/${id}/deliveries`],
    ];
    for (const [m, p, b] of calls) {
      expectEnvelope(await live(m, p, b), 403, "mode_mismatch");
      expectEnvelope(await stranger(m, p, b), 404, "not_found");
    }
    expect((await live("GET", "/webhooks")).json.data).toEqual([]);
    expectEnvelope(await api("GET", `/webhooks/${crypto.randomUUID()}`), 404, "not_found");
    // Still intact and unsent.
    expect((await api("GET", `/webhooks/${id}`)).json.description).toBeNull();
    expect(rx.at("/mode")).toHaveLength(0);
  });
});

describe("webhook validation rules", () => {
  const long = (n: number) => "https://example.com/" + "a".repeat(n - 20);
  const createCases: [string, unknown, string | null, "test" | "live"][] = [
    ["url is required", { events: [] }, "url", "test"],
    ["url must be a string", { url: 5 }, "url", "test"],
    ["url must be an absolute URL", { url: "hooks.example.com/x" }, "url", "test"],
    ["url must be http or https", { url: "ftp://example.com/x" }, "url", "test"],
    ["url is at most 2048 characters", { url: long(2049) }, "url", "test"],
    ["url must not carry credentials", { url: "https://user:pw@example.com/x" }, "url", "test"],
    ["live mode needs https", { url: "http://example.com/x" }, "url", "live"],
    [
      "description is at most 255 characters",
      { url: "https://example.com/x", description: "d".repeat(256) },
      "description",
      "test",
    ],
    ["events must be known types", { url: "https://example.com/x", events: ["job.started"] }, "events", "test"],
    [
      "events must not repeat",
      { url: "https://example.com/x", events: ["job.failed", "job.failed"] },
      "events",
      "test",
    ],
    ["events must be an array", { url: "https://example.com/x", events: "job.failed" }, "events", "test"],
    ["unknown fields are refused", { url: "https://example.com/x", secret: "whsec_mine" }, "secret", "test"],
  ];
  for (const [rule, body, param, mode] of createCases) {
    test(`POST /webhooks: ${rule} (422 validation_error, param ${param})`, async () => {
      const { api } = await account(mode);
      const e = expectEnvelope(await api("POST", "/webhooks", body), 422, "validation_error");
      expect(e.param).toBe(param);
      expect((await api("GET", "/webhooks")).json.data).toEqual([]);
    });
  }

  test("POST /webhooks: url of exactly 2048 characters and description of 255 are accepted", async () => {
    const { api } = await account();
    const r = await api("POST", "/webhooks", { url: long(2048), description: "d".repeat(255), events: allTypes });
    expect(r.status).toBe(201);
    expect(r.json.url).toHaveLength(2048);
  });

  test("POST /webhooks: a body that is not JSON is 422 validation_error", async () => {
    const { api } = await account();
    expectEnvelope(await api("POST", "/webhooks", "{not json"), 422, "validation_error");
    expectEnvelope(
      await api("POST", "/webhooks", "url=x", { "content-type": "application/x-www-form-urlencoded" }),
      422,
      "validation_error",
    );
  });

  test("PATCH /webhooks/{id}: the same rules apply to url, description, events and enabled", async () => {
    const { api } = await account();
    const id = (await api("POST", "/webhooks", { url: rx.url("/vpatch") })).json.id;
    const cases: [unknown, string][] = [
      [{ url: "not a url" }, "url"],
      [{ url: long(2049) }, "url"],
      [{ description: "d".repeat(256) }, "description"],
      [{ events: ["nope"] }, "events"],
      [{ enabled: "yes" }, "enabled"],
      [{ secret: "x" }, "secret"],
    ];
    for (const [body, param] of cases)
      expect(expectEnvelope(await api("PATCH", `/webhooks/${id}`, body), 422, "validation_error").param).toBe(param);
    const live = await keyFor(
      (await svc.sql`SELECT account_id FROM webhook_endpoints WHERE id = ${id}`)[0]!.account_id,
      "live",
    );
    const liveId = (await live("POST", "/webhooks", { url: "https://localhost:1/x" })).json.id;
    expect(
      expectEnvelope(
        await live("PATCH", `/webhooks/${liveId}`, { url: "http://localhost:1/x" }),
        422,
        "validation_error",
      ).param,
    ).toBe("url");
    expect((await api("GET", `/webhooks/${id}`)).json.url).toBe(rx.url("/vpatch"));
  });

  test("path and query: webhook_id must be a uuid; deliveries limit is an integer from 1 to 100; GET /webhooks takes no query", async () => {
    const { api } = await account();
    const id = (await api("POST", "/webhooks", { url: rx.url("/vq") })).json.id;
    expect(expectEnvelope(await api("GET", "/webhooks/not-a-uuid"), 422, "validation_error").param).toBe("webhook_id");
    for (const l of ["0", "101", "abc", "1.5"])
      expect(
        expectEnvelope(await api("GET", `/webhooks/${id}/deliveries?limit=${l}`), 422, "validation_error").param,
      ).toBe("limit");
    for (const l of ["1", "100"]) expect((await api("GET", `/webhooks/${id}/deliveries?limit=${l}`)).status).toBe(200);
    expect(expectEnvelope(await api("GET", "/webhooks?limit=5"), 422, "validation_error").param).toBe("limit");
  });
});

describe("webhook delivery", () => {
  test("webhook.test is signed: stripe's constructEvent verifies Service-Signature with the endpoint secret", async () => {
    const { api } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/signed") });
    const r = await api("POST", `/webhooks/${c.json.id}/test`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: "webhook_delivery",
      webhook_id: c.json.id,
      event_type: "webhook.test",
      attempt: 1,
      status: "succeeded",
      response_status: 200,
      error: null,
      livemode: false,
    });
    const [hit] = rx.at("/signed");
    expect(hit).toBeDefined();
    expect(hit!.headers["service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const event = await verifyWithStripe(hit!, c.json.secret);
    expect(event.id).toBe(r.json.event_id);
    await expect(verifyWithStripe(hit!, "whsec_wrong")).rejects.toThrow();
    await expect(
      verifyWithStripe({ ...hit!, raw: hit!.raw.replace("webhook.test", "webhook.tesT") }, c.json.secret),
    ).rejects.toThrow();
  });

  test("webhook.test has the event envelope: evt_ id, object event, type, api_version 2026-09-01, livemode false, created_at, data.object", async () => {
    const { api } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/envelope") });
    const r = await api("POST", `/webhooks/${c.json.id}/test`);
    const hit = rx.at("/envelope")[0]!;
    expect(hit.headers["service-event"]).toBe("webhook.test");
    expect(hit.headers["content-type"]).toBe("application/json");
    const e = hit.json;
    expect(Object.keys(e)).toEqual(["id", "object", "type", "api_version", "livemode", "created_at", "data"]);
    expect(e.id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(e.id).toBe(r.json.event_id);
    expect(e).toMatchObject({ object: "event", type: "webhook.test", api_version: "2026-09-01", livemode: false });
    expect(e.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    expect(Math.abs(Date.parse(e.created_at) - Date.now())).toBeLessThan(60_000);
    expect(e.data.object).toMatchObject({ id: c.json.id, object: "webhook_endpoint", url: rx.url("/envelope") });
    expect(JSON.stringify(e)).not.toContain(c.json.secret);
  });

  test("webhook.test goes only to the endpoint tested, and only if it subscribes to webhook.test", async () => {
    const { api } = await account();
    const all = (await api("POST", "/webhooks", { url: rx.url("/sub-all") })).json.id;
    const only = (await api("POST", "/webhooks", { url: rx.url("/sub-test"), events: ["webhook.test"] })).json.id;
    const jobs = (await api("POST", "/webhooks", { url: rx.url("/sub-jobs"), events: ["job.succeeded", "job.failed"] }))
      .json.id;
    expect((await api("POST", `/webhooks/${all}/test`)).status).toBe(200);
    expect((await api("POST", `/webhooks/${only}/test`)).status).toBe(200);
    const e = expectEnvelope(await api("POST", `/webhooks/${jobs}/test`), 409, "webhook_not_subscribed");
    expect(e.type).toBe("conflict_error");
    await Bun.sleep(500);
    expect(rx.at("/sub-all")).toHaveLength(1);
    expect(rx.at("/sub-test")).toHaveLength(1);
    expect(rx.at("/sub-jobs")).toHaveLength(0);
    expect(await deliveries(api, jobs)).toEqual([]);
  });

  test("POST /webhooks/{id}/test answers 502 webhook_delivery_failed when the endpoint fails; the attempt stays in the log and is not retried", async () => {
    const { api } = await account();
    const failing = (await api("POST", "/webhooks", { url: rx.url("/test-500", 500) })).json.id;
    const e = expectEnvelope(await api("POST", `/webhooks/${failing}/test`), 502, "webhook_delivery_failed");
    expect(e.type).toBe("api_error");
    expect(e.message).toContain("500");
    expect(e.delivery).toMatchObject({ status: "failed", response_status: 500, attempt: 1 });
    const closed = (await api("POST", "/webhooks", { url: "http://127.0.0.1:1/closed" })).json.id;
    const e2 = expectEnvelope(await api("POST", `/webhooks/${closed}/test`), 502, "webhook_delivery_failed");
    expect(e2.delivery).toMatchObject({ status: "failed", response_status: null, error: "connection refused" });
    await Bun.sleep(2500); // longer than the retry wait: a test event must not be retried
    expect(rx.at("/test-500")).toHaveLength(1);
    const log = await deliveries(api, failing);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      id: e.delivery.id,
      event_type: "webhook.test",
      status: "failed",
      response_status: 500,
      attempt: 1,
    });
    expect(log[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(log[0].attempted_at).not.toBeNull();
  });

  test("job.succeeded, job.failed, job.cancelled and file.expired arrive with their envelopes, only where subscribed", async () => {
    const { api, accountId } = await account();
    const secrets = new Map<string, string>();
    const mk = async (path: string, events: string[]) => {
      const r = await api("POST", "/webhooks", { url: rx.url(path), events });
      secrets.set(path, r.json.secret);
      return r.json.id;
    };
    await mk("/ev-all", []);
    for (const t of ["job.succeeded", "job.failed", "job.cancelled", "file.expired"]) await mk(`/ev-${t}`, [t]);
    await mk("/ev-test-only", ["webhook.test"]);
    const job = (status: string, extra = {}) => ({
      id: crypto.randomUUID(),
      object: "job",
      operation: "rotate",
      status,
      metadata: { order: "42" },
      sandbox: true,
      ...extra,
    });
    const sent = [
      await emit(
        svc.sql,
        accountId,
        "test",
        "job.succeeded",
        job("succeeded", { result: { download_url: "http://x/result", pages_processed: 3 } }),
      ),
      await emit(
        svc.sql,
        accountId,
        "test",
        "job.failed",
        job("failed", { error: { code: "file_unreadable", message: "damaged" } }),
      ),
      await emit(svc.sql, accountId, "test", "job.cancelled", job("cancelled")),
      await emit(svc.sql, accountId, "test", "file.expired", {
        id: crypto.randomUUID(),
        object: "file",
        status: "expired",
      }),
    ];
    await rx.waitFor(
      () => rx.at("/ev-all").length === 4 && sent.every((s) => rx.at(`/ev-${s.type}`).length === 1),
      20_000,
      "four event types",
    );
    await Bun.sleep(500);
    expect(rx.at("/ev-all")).toHaveLength(4);
    expect(rx.at("/ev-test-only")).toHaveLength(0);
    for (const s of sent) {
      const hits = rx.at(`/ev-${s.type}`);
      expect(hits).toHaveLength(1);
      const hit = hits[0]!;
      expect(hit.headers["service-event"]).toBe(s.type);
      expect(hit.headers["content-type"]).toBe("application/json");
      expect(hit.json).toEqual(JSON.parse(JSON.stringify(s)));
      expect(hit.json).toMatchObject({ object: "event", api_version: "2026-09-01", livemode: false });
      expect((await verifyWithStripe(hit, secrets.get(`/ev-${s.type}`)!)).id).toBe(s.id);
      const viaAll = rx.at("/ev-all").find((h) => h.json.id === s.id)!;
      expect((await verifyWithStripe(viaAll, secrets.get("/ev-all")!)).id).toBe(s.id);
      await expect(verifyWithStripe(viaAll, secrets.get(`/ev-${s.type}`)!)).rejects.toThrow();
    }
    expect(rx.at("/ev-job.failed")[0]!.json.data.object.error.code).toBe("file_unreadable");
  });

  test("events reach only endpoints of their own account and mode", async () => {
    const a = await account();
    const b = await account();
    await a.api("POST", "/webhooks", { url: rx.url("/iso-a") });
    await b.api("POST", "/webhooks", { url: rx.url("/iso-b") });
    const live = await keyFor(a.accountId, "live");
    await live("POST", "/webhooks", { url: "https://localhost:1/iso-live" });
    const e = await emit(svc.sql, a.accountId, "test", "job.succeeded", { id: "j1", object: "job" });
    await emit(svc.sql, a.accountId, "live", "job.cancelled", { id: "j2", object: "job" });
    await rx.waitFor(() => rx.at("/iso-a").length === 1, 20_000, "account a");
    await Bun.sleep(500);
    expect(rx.at("/iso-a").map((h) => h.json.id)).toEqual([e.id]);
    expect(rx.at("/iso-b")).toHaveLength(0);
  });

  test("live-mode events carry livemode: true and go over https, the certificate checked against the URL's hostname", async () => {
    const { api, accountId } = await account("live");
    const c = await api("POST", "/webhooks", { url: rxs.url("/live") });
    expect(c.status).toBe(201);
    expect(c.json.livemode).toBe(true);
    const t = await api("POST", `/webhooks/${c.json.id}/test`);
    expect(t.status).toBe(200);
    expect(t.json.livemode).toBe(true);
    const e = await emit(svc.sql, accountId, "live", "job.succeeded", {
      id: "live-job",
      object: "job",
      status: "succeeded",
    });
    await rxs.waitFor(() => rxs.at("/live").length === 2, 20_000, "live deliveries");
    const [testHit, jobHit] = rxs.at("/live");
    expect(testHit!.json).toMatchObject({ type: "webhook.test", livemode: true });
    expect(jobHit!.json).toMatchObject({ id: e.id, type: "job.succeeded", livemode: true });
    expect(jobHit!.headers.host).toBe(`localhost:${rxs.server.port}`);
    expect((await verifyWithStripe(jobHit!, c.json.secret)).id).toBe(e.id);
  });

  test("a failing receiver gets exactly six attempts of one event, same id and body, and the log shows all six", async () => {
    const { api, accountId } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/six", 500) });
    const e = await emit(svc.sql, accountId, "test", "job.failed", {
      id: "six",
      object: "job",
      status: "failed",
      error: { code: "internal_error" },
    });
    await rx.waitFor(() => rx.at("/six").length >= 6, 30_000, "six attempts");
    await Bun.sleep(2500); // a seventh would come 1 s after the sixth
    const hits = rx.at("/six");
    expect(hits).toHaveLength(6);
    expect(new Set(hits.map((h) => h.json.id))).toEqual(new Set([e.id]));
    expect(new Set(hits.map((h) => h.raw)).size).toBe(1);
    for (const h of hits) expect((await verifyWithStripe(h, c.json.secret)).id).toBe(e.id);
    // Waits follow WEBHOOK_RETRY_DELAYS_S (1 s each here).
    for (let i = 1; i < 6; i++) expect(hits[i]!.at - hits[i - 1]!.at).toBeGreaterThanOrEqual(900);
    const log = await deliveries(api, c.json.id);
    expect(log.map((d) => d.attempt)).toEqual([6, 5, 4, 3, 2, 1]);
    for (const d of log) {
      expect(d).toMatchObject({
        object: "webhook_delivery",
        event_id: e.id,
        event_type: "job.failed",
        status: "failed",
        response_status: 500,
        error: null,
        next_attempt_at: null,
      });
      expect(typeof d.duration_ms).toBe("number");
      expect(d.attempted_at).not.toBeNull();
    }
    const [ep] = await svc.sql`SELECT consecutive_failures, enabled FROM webhook_endpoints WHERE id = ${c.json.id}`;
    expect(ep).toEqual({ consecutive_failures: 6, enabled: true });
  });

  test("a receiver that recovers ends the schedule: the attempt that succeeds is the last", async () => {
    const { api, accountId } = await account();
    let n = 0;
    const c = await api("POST", "/webhooks", {
      url: rx.url("/recover", () => new Response(null, { status: ++n < 3 ? 503 : 204 })),
    });
    const e = await emit(svc.sql, accountId, "test", "job.succeeded", { id: "rec", object: "job" });
    await rx.waitFor(() => rx.at("/recover").length >= 3, 20_000, "three attempts");
    await Bun.sleep(2000);
    expect(rx.at("/recover")).toHaveLength(3);
    const log = await deliveries(api, c.json.id);
    expect(log.map((d) => [d.attempt, d.status, d.response_status])).toEqual([
      [3, "succeeded", 204],
      [2, "failed", 503],
      [1, "failed", 503],
    ]);
    expect(log.every((d) => d.event_id === e.id)).toBe(true);
    const [ep] = await svc.sql`SELECT consecutive_failures FROM webhook_endpoints WHERE id = ${c.json.id}`;
    expect(ep!.consecutive_failures).toBe(0);
  });

  test("a pending retry is visible in the log with next_attempt_at, and deleting the endpoint drops it", async () => {
    const { api, accountId } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/drop", 500) });
    await emit(svc.sql, accountId, "test", "job.failed", { id: "drop", object: "job" });
    const log = await until(
      () => deliveries(api, c.json.id),
      (l) => l.length === 2 && l[0].status === "pending",
      20_000,
      "a pending second attempt",
    );
    expect(log[0]).toMatchObject({ attempt: 2, status: "pending", attempted_at: null, response_status: null });
    expect(Date.parse(log[0].next_attempt_at)).toBeGreaterThan(Date.parse(log[1].attempted_at));
    await api("DELETE", `/webhooks/${c.json.id}`);
    await Bun.sleep(2000);
    expect(rx.at("/drop")).toHaveLength(1);
    const [{ n }] =
      (await svc.sql`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${c.json.id} AND status = 'pending'`) as any;
    expect(n).toBe(0);
  });

  test("30 consecutive failed attempts disable the endpoint with disabled_reason; PATCH enabled: true re-enables it and held attempts resume", async () => {
    const { api, accountId } = await account();
    const c = await api("POST", "/webhooks", { url: rx.url("/thirty", 500) });
    const id = c.json.id;
    const events = await svc.sql.begin(async (tx) => {
      const out = [];
      for (let i = 0; i < 30; i++)
        out.push(await emit(tx, accountId, "test", "job.failed", { id: `j${i}`, object: "job", status: "failed" }));
      return out;
    });
    const disabled = await until(
      () => api("GET", `/webhooks/${id}`),
      (r) => r.json.enabled === false,
      30_000,
      "the endpoint to be disabled",
    );
    expect(disabled.json.disabled_reason).toContain("30 consecutive failed delivery attempts");
    expect(rx.at("/thirty").length).toBeGreaterThanOrEqual(30);
    // Disabled: new events are not fanned out to it, and held retries are not sent.
    const late = await emit(svc.sql, accountId, "test", "job.failed", { id: "late", object: "job" });
    await Bun.sleep(2000);
    const hitsWhileDisabled = rx.at("/thirty").length;
    await Bun.sleep(1500);
    expect(rx.at("/thirty").length).toBe(hitsWhileDisabled);
    expect(rx.at("/thirty").some((h) => h.json.id === late.id)).toBe(false);

    // The log: default 20, newest first, has_more; limit respected.
    const page = await api("GET", `/webhooks/${id}/deliveries`);
    expect(page.json.data).toHaveLength(20);
    expect(page.json.has_more).toBe(true);
    const created = page.json.data.map((d: any) => Date.parse(d.created_at));
    expect([...created].sort((a, b) => b - a)).toEqual(created);
    expect((await api("GET", `/webhooks/${id}/deliveries?limit=5`)).json.data).toHaveLength(5);

    rx.answer("/thirty", 200);
    const re = await api("PATCH", `/webhooks/${id}`, { enabled: true });
    expect(re.status).toBe(200);
    expect(re.json).toMatchObject({ enabled: true, disabled_reason: null });
    const ids = new Set(events.map((e) => e.id));
    await rx.waitFor(
      () => {
        const ok = new Set(
          rx
            .at("/thirty")
            .filter((h) => h.at >= Date.now() - 60_000 && ids.has(h.json.id))
            .map((h) => h.json.id),
        );
        return ok.size === 30 && rx.at("/thirty").length >= hitsWhileDisabled + 30;
      },
      30_000,
      "held retries after re-enabling",
    );
    // The receiver has answered; the dispatcher records each outcome just after its 200
    // arrives, so the log can trail the receiver by a moment.
    const succeededCount = async () =>
      (
        await svc.sql`SELECT count(DISTINCT event_id)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${id} AND status = 'succeeded'`
      )[0]!.n;
    const deadline = Date.now() + 5_000;
    while ((await succeededCount()) < 30 && Date.now() < deadline) await Bun.sleep(50);
    expect(await succeededCount()).toBe(30);
    const [ep] = await svc.sql`SELECT consecutive_failures, enabled FROM webhook_endpoints WHERE id = ${id}`;
    expect(ep).toEqual({ consecutive_failures: 0, enabled: true });
  }, 90_000);

  test("a burst of events to two dispatchers is delivered exactly once each", async () => {
    const { api, accountId } = await account();
    await api("POST", "/webhooks", { url: rx.url("/burst") });
    const ids = await svc.sql.begin(async (tx) => {
      const out: string[] = [];
      for (let i = 0; i < 60; i++)
        out.push((await emit(tx, accountId, "test", "job.succeeded", { id: `b${i}`, object: "job" })).id);
      return out;
    });
    await rx.waitFor(() => rx.at("/burst").length >= 60, 30_000, "sixty deliveries");
    await Bun.sleep(1000);
    const got = rx.at("/burst").map((h) => h.json.id);
    expect(got).toHaveLength(60);
    expect(new Set(got)).toEqual(new Set(ids));
  });
});
