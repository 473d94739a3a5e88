// The API spec (docs/api.md), Authentication (issue 2, point 2): Bearer keys only, each auth error, mode from the
// prefix, plan and email checks, scopes per route, rotation with a grace period, the ignored
// X-Internal-Token / X-Account-Id headers, and keys stored only as hashes.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { Type as T } from "@sinclair/typebox";
import { client, expectEnvelope } from "../support/service";
import { useService } from "../support/use-service";
import { waitFor } from "../support/wait";
import { concretePath, documentedOperations, specRouteScopes, specScopes } from "../support/spec";
import { allRoutes } from "../../src/http/routes";
import { buildApp } from "../../src/http/app";
import { route } from "../../src/modules/common/route";
import { connect, disconnect } from "../../src/db/client";

// Starting the service and waiting out grace periods takes longer than bun's 5 s default.
setDefaultTimeout(60_000);

const svc = useService();

async function get(path: string, headers: Record<string, string> = {}) {
  return client(svc.baseUrl)("GET", path, undefined, headers);
}

describe("missing or unusable credentials", () => {
  test("no key answers 401 authentication_required", async () => {
    const e = expectEnvelope(await get("/account"), 401, "authentication_required");
    expect(e.type).toBe("authentication_error");
  });

  test("an empty Authorization header answers 401 authentication_required", async () => {
    expectEnvelope(await get("/account", { authorization: "" }), 401, "authentication_required");
    expectEnvelope(await get("/account", { authorization: "Bearer " }), 401, "authentication_required");
  });

  test("a valid key sent only as a cookie never authenticates (401 authentication_required)", async () => {
    const { key } = await svc.newKey();
    for (const cookie of [`api_key=${key}`, `session=${key}`, `authorization=Bearer ${key}`, key]) {
      expectEnvelope(await get("/account", { cookie }), 401, "authentication_required");
    }
    // And a cookie does not change who a Bearer request acts for.
    const other = await svc.newKey();
    const r = await client(svc.baseUrl, key)("GET", "/account", undefined, { cookie: `api_key=${other.key}` });
    expect(r.status).toBe(200);
    expect(r.json.key.id).not.toBe(other.keyId);
  });

  test("a valid key in the query string never authenticates", async () => {
    const { key } = await svc.newKey();
    expectEnvelope(await get(`/account?api_key=${key}`), 401, "authentication_required");
  });

  test("a non-Bearer scheme answers 401 authentication_required", async () => {
    const { key } = await svc.newKey();
    for (const authorization of [`Basic ${btoa(key + ":")}`, `Token ${key}`, key, `Bearer${key}`, `Digest ${key}`]) {
      expectEnvelope(await get("/account", { authorization }), 401, "authentication_required");
    }
  });

  test("the Bearer scheme name is case-insensitive", async () => {
    const { key } = await svc.newKey();
    expect((await get("/account", { authorization: `bearer ${key}` })).status).toBe(200);
  });

  test("a malformed key answers 401 invalid_api_key", async () => {
    const { key } = await svc.newKey();
    for (const bad of [
      "not-a-key",
      "svk_test_",
      "svk_test_short",
      "svk_prod_" + key.slice(9),
      key + "x",
      key.slice(0, -1),
      key.replace(/.$/, "!"),
      "Bearer",
    ]) {
      const e = expectEnvelope(await get("/account", { authorization: `Bearer ${bad}` }), 401, "invalid_api_key");
      expect(e.type).toBe("authentication_error");
    }
  });

  test("an unknown key of the right format answers 401 invalid_api_key", async () => {
    const { key } = await svc.newKey();
    // Same lookup prefix, different tail: the row is found, the hash does not match.
    const tail = key.slice(-1) === "A" ? "B" : "A";
    const sameLookup = key.slice(0, -1) + tail;
    expectEnvelope(await get("/account", { authorization: `Bearer ${sameLookup}` }), 401, "invalid_api_key");
    const random = "svk_test_" + "Z".repeat(40);
    expectEnvelope(await get("/account", { authorization: `Bearer ${random}` }), 401, "invalid_api_key");
  });

  test("a key whose mode prefix was swapped answers 401 invalid_api_key", async () => {
    const { key } = await svc.newKey({ mode: "test" });
    expectEnvelope(
      await get("/account", { authorization: `Bearer ${key.replace("svk_test_", "svk_live_")}` }),
      401,
      "invalid_api_key",
    );
  });

  test("a revoked key answers 401 invalid_api_key", async () => {
    const { key, keyId } = await svc.newKey();
    const c = client(svc.baseUrl, key);
    expect((await c("GET", "/account")).status).toBe(200);
    const out = await svc.admin("key:revoke", "--key", keyId);
    expect(out).toEqual({ id: keyId, revoked: true });
    const e = expectEnvelope(await c("GET", "/account"), 401, "invalid_api_key");
    expect(e.message).toMatch(/revoked/i);
  });

  test("an expired key answers 401 invalid_api_key", async () => {
    const account = await svc.admin("account:create", "--email", `exp-${Date.now()}@example.com`);
    const k = await svc.admin("key:create", "--account", account.id, "--mode", "test", "--expires-in", "1");
    const c = client(svc.baseUrl, k.key);
    const r = await waitFor(
      "the key to expire",
      async () => {
        const r = await c("GET", "/account");
        return r.status === 401 ? r : undefined;
      },
      10_000,
      100,
    );
    const e = expectEnvelope(r, 401, "invalid_api_key");
    expect(e.message).toMatch(/expired/i);
  });

  test("a key with an expiry works until then and GET /account shows expires_at", async () => {
    const { key } = await svc.newKey({ expiresIn: 3600 });
    const r = await client(svc.baseUrl, key)("GET", "/account");
    expect(r.status).toBe(200);
    const exp = Date.parse(r.json.key.expires_at);
    expect(exp - Date.now()).toBeGreaterThan(3500_000);
    expect(exp - Date.now()).toBeLessThan(3700_000);
  });
});

describe("mode, plan and email", () => {
  test("the svk_test_ prefix means sandbox mode: GET /account shows mode test, livemode false", async () => {
    const { key, keyId, accountId } = await svc.newKey({ mode: "test" });
    expect(key).toMatch(/^svk_test_[0-9A-Za-z]{40}$/);
    const r = await client(svc.baseUrl, key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.id).toBe(accountId);
    expect(r.json.key).toMatchObject({ id: keyId, mode: "test", livemode: false, last4: key.slice(-4) });
    expect(r.json.limits).toMatchObject({
      requests_per_minute: 30,
      concurrent_jobs: 2,
      pages_per_job: 100,
      billed: false,
    });
  });

  test("the svk_live_ prefix means live mode: GET /account shows mode live, livemode true", async () => {
    const { key, keyId } = await svc.newKey({ mode: "live", plan: "starter" });
    expect(key).toMatch(/^svk_live_[0-9A-Za-z]{40}$/);
    const r = await client(svc.baseUrl, key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.key).toMatchObject({ id: keyId, mode: "live", livemode: true });
    expect(r.json.plan).toMatchObject({ id: "starter", price_eur_per_month: 19, included_credits_per_month: 2000 });
    expect(r.json.limits).toMatchObject({ requests_per_minute: 60, concurrent_jobs: 2, billed: true });
  });

  test("a live key on a free-plan account answers 403 plan_required with upgrade_url", async () => {
    const { key, accountId } = await svc.newKey({ mode: "live", plan: "free" });
    const c = client(svc.baseUrl, key);
    for (const path of ["/account", "/operations"]) {
      const e = expectEnvelope(await c("GET", path), 403, "plan_required");
      expect(e.type).toBe("permission_error");
      expect(typeof e.upgrade_url).toBe("string");
      expect(() => new URL(e.upgrade_url)).not.toThrow();
    }
    // Subscribing to the starter plan unlocks the same key.
    await svc.admin("account:set", "--account", accountId, "--plan", "starter");
    expect((await c("GET", "/account")).status).toBe(200);
  });

  test("a sandbox key on a free-plan account works", async () => {
    const { key } = await svc.newKey({ mode: "test", plan: "free" });
    const r = await client(svc.baseUrl, key)("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.plan.id).toBe("free");
    expect(r.json.key.mode).toBe("test");
    expect((await client(svc.baseUrl, key)("GET", "/operations")).status).toBe(200);
  });

  test("an unverified account answers 403 email_unverified until the email is verified", async () => {
    const account = await svc.admin(
      "account:create",
      "--email",
      `unverified-${Date.now()}@example.com`,
      "--unverified",
    );
    expect(account.email_verified).toBe(false);
    const k = await svc.admin("key:create", "--account", account.id, "--mode", "test");
    const c = client(svc.baseUrl, k.key);
    for (const path of ["/account", "/operations"]) {
      const e = expectEnvelope(await c("GET", path), 403, "email_unverified");
      expect(e.type).toBe("permission_error");
    }
    const set = await svc.admin("account:set", "--account", account.id, "--email-verified", "true");
    expect(set.email_verified).toBe(true);
    const r = await c("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.email_verified).toBe(true);
  });

  test("routes marked none need no key; routes marked any accept a key with no scopes", async () => {
    for (const path of ["/errors", "/pricing", "/openapi.json"]) expect((await get(path)).status).toBe(200);
    const { key } = await svc.newKey({ scopes: [] });
    const c = client(svc.baseUrl, key);
    const r = await c("GET", "/account");
    expect(r.status).toBe(200);
    expect(r.json.key.scopes).toEqual([]);
    expect((await c("GET", "/operations")).status).toBe(200);
  });
});

describe("scopes", () => {
  test("the OpenAPI document declares each route's scope as in the spec's endpoint tables", async () => {
    const doc = (await get("/openapi.json")).json;
    const ops = documentedOperations(doc);
    expect(ops.length).toBeGreaterThan(0);
    for (const { key, op } of ops) {
      const expected = specRouteScopes[key];
      if (expected === undefined) continue; // an extension route: not in the spec table
      if (expected === "none") {
        expect({ key, security: op.security }).toEqual({ key, security: [] });
        expect(op["x-required-scope"]).toBeUndefined();
      } else {
        expect({ key, scope: op["x-required-scope"] }).toEqual({ key, scope: expected });
        expect(op.security).toEqual([{ bearerAuth: [] }]);
      }
    }
  });

  const scoped = allRoutes.filter((r) => r.scope !== "any" && r.scope !== "none");
  if (scoped.length === 0)
    console.warn(
      "auth.test: no scoped route exists yet in src/http/routes.ts; the per-route insufficient_scope test is skipped",
    );

  test.skipIf(scoped.length === 0)(
    "every scoped route answers 403 insufficient_scope to a key without its scope, naming the scope in param",
    async () => {
      const doc = (await get("/openapi.json")).json;
      const ops = documentedOperations(doc).filter(
        (o) => o.op["x-required-scope"] && o.op["x-required-scope"] !== "any",
      );
      expect(ops.length).toBe(scoped.length);
      for (const scope of specScopes) {
        const mine = ops.filter((o) => o.op["x-required-scope"] === scope);
        if (!mine.length) continue;
        const lacking = client(svc.baseUrl, (await svc.newKey({ scopes: specScopes.filter((s) => s !== scope) })).key);
        const only = client(svc.baseUrl, (await svc.newKey({ scopes: [scope] })).key);
        for (const o of mine) {
          const path = concretePath(o.path);
          const denied = await lacking(o.method, path);
          const e = expectEnvelope(denied, 403, "insufficient_scope");
          expect({ route: o.key, param: e.param, type: e.type }).toEqual({
            route: o.key,
            param: scope,
            type: "permission_error",
          });
          expect(denied.headers.get("x-ratelimit-limit")).toBe("30");
          const allowed = await only(o.method, path);
          expect({ route: o.key, code: allowed.json?.error?.code ?? null }).not.toEqual({
            route: o.key,
            code: "insufficient_scope",
          });
        }
      }
    },
  );

  describe("through the real route wrapper on a synthetic scoped route", () => {
    // A route declared like the real ones, served by the real buildApp against the service's
    // database: proves the scope check for every scope whether or not the scoped routes exist.
    let app: ReturnType<typeof buildApp>;
    let base: string;
    beforeAll(() => {
      connect(svc.databaseUrl, 4);
      const probes = specScopes.map((scope) =>
        route({
          method: "GET",
          path: `/scope-probe/${scope.replace(":", "-")}`,
          operationId: `probe_${scope}`,
          summary: "test",
          tag: "Test",
          scope: scope as never,
          responses: { 200: { description: "ok", schema: T.Object({ ok: T.Boolean() }) } },
          errors: [],
          handler: () => ({ status: 200, body: { ok: true } }),
        }),
      );
      app = buildApp(probes);
      app.listen({ hostname: "127.0.0.1", port: 0 });
      base = `http://127.0.0.1:${app.server!.port}/api/v1`;
    });
    afterAll(async () => {
      await app?.stop();
      await disconnect();
    });

    for (const scope of specScopes) {
      test(`a key without ${scope} answers 403 insufficient_scope; a key with only ${scope} passes`, async () => {
        const path = `/scope-probe/${scope.replace(":", "-")}`;
        const lacking = await svc.newKey({ scopes: specScopes.filter((s) => s !== scope) });
        const e = expectEnvelope(await client(base, lacking.key)("GET", path), 403, "insufficient_scope");
        expect(e.param).toBe(scope);
        expect(e.type).toBe("permission_error");
        const only = await svc.newKey({ scopes: [scope] });
        const r = await client(base, only.key)("GET", path);
        expect(r.status).toBe(200);
        expect(r.json).toEqual({ ok: true });
      });
    }
  });
});

describe("rotation", () => {
  test("key:rotate --grace 2: both keys work, the old key fails after the grace period", async () => {
    const { key: oldKey, keyId: oldId, accountId } = await svc.newKey();
    const rotated = await svc.admin("key:rotate", "--key", oldId, "--grace", "2");
    expect(rotated.key).toMatch(/^svk_test_[0-9A-Za-z]{40}$/);
    expect(rotated.id).not.toBe(oldId);
    const validUntil = Date.parse(rotated.old_key_valid_until);
    expect(Number.isFinite(validUntil)).toBe(true);

    const oldC = client(svc.baseUrl, oldKey);
    const newC = client(svc.baseUrl, rotated.key);
    const o = await oldC("GET", "/account");
    expect(o.status).toBe(200);
    expect(o.json.key.id).toBe(oldId);
    expect(Date.parse(o.json.key.expires_at)).toBe(validUntil);
    const n = await newC("GET", "/account");
    expect(n.status).toBe(200);
    expect(n.json.key.id).toBe(rotated.id);
    expect(n.json.id).toBe(accountId);
    expect(n.json.key.expires_at).toBeNull();

    const failed = await waitFor(
      "the old key to stop working",
      async () => {
        const r = await oldC("GET", "/account");
        return r.status === 200 ? undefined : r;
      },
      15_000,
      100,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(validUntil - 50);
    expectEnvelope(failed, 401, "invalid_api_key");
    expect((await newC("GET", "/account")).status).toBe(200);
  });

  test("key:rotate keeps the scopes of the old key", async () => {
    const { keyId } = await svc.newKey({ scopes: ["jobs:read"] });
    const rotated = await svc.admin("key:rotate", "--key", keyId, "--grace", "0");
    const r = await client(svc.baseUrl, rotated.key)("GET", "/account");
    expect(r.json.key.scopes).toEqual(["jobs:read"]);
  });
});

describe("the key alone decides the account", () => {
  test("X-Internal-Token and X-Account-Id never change the account or mode GET /account reports", async () => {
    const me = await svc.newKey({ mode: "test" });
    const other = await svc.newKey({ mode: "live" });
    const c = client(svc.baseUrl, me.key);
    const variants: Record<string, string>[] = [
      { "x-account-id": other.accountId },
      { "x-internal-token": "anything" },
      { "x-internal-token": other.key, "x-account-id": other.accountId },
      { "x-internal-token": "", "x-account-id": "not-a-uuid" },
    ];
    for (const headers of variants) {
      const r = await c("GET", "/account", undefined, headers);
      expect(r.status).toBe(200);
      expect(r.json.id).toBe(me.accountId);
      expect(r.json.key.id).toBe(me.keyId);
      expect(r.json.key.mode).toBe("test");
    }
  });

  test("X-Internal-Token and X-Account-Id without a key do not authenticate", async () => {
    const other = await svc.newKey();
    expectEnvelope(
      await get("/account", { "x-internal-token": other.key, "x-account-id": other.accountId }),
      401,
      "authentication_required",
    );
  });

  test("keys are stored hashed: no api_keys column contains the key text", async () => {
    const made = [await svc.newKey(), await svc.newKey({ mode: "live" })];
    const viaCli = await svc.admin("key:create", "--account", made[0]!.accountId, "--mode", "test");
    const rotated = await svc.admin("key:rotate", "--key", viaCli.id, "--grace", "60");
    const keys = [...made.map((m) => m.key), viaCli.key, rotated.key];
    const rows = await svc.sql`SELECT * FROM api_keys`;
    expect(rows.length).toBeGreaterThanOrEqual(keys.length);
    for (const row of rows) {
      for (const [col, value] of Object.entries(row)) {
        const forms =
          value instanceof Uint8Array
            ? [
                Buffer.from(value).toString("utf8"),
                Buffer.from(value).toString("hex"),
                Buffer.from(value).toString("base64"),
              ]
            : [JSON.stringify(value) ?? ""];
        for (const text of forms) {
          for (const key of keys) {
            const secret = key.slice("svk_test_".length);
            expect({ col, leaks: text.includes(key) || text.includes(secret) }).toEqual({ col, leaks: false });
          }
        }
      }
    }
    // What is stored is the SHA-256 of the key.
    for (const key of keys) {
      const digest = createHash("sha256").update(key).digest();
      const [hit] = await svc.sql`SELECT count(*)::int AS n FROM api_keys WHERE secret_hash = ${digest}`;
      expect(hit!.n).toBe(1);
    }
  });
});
