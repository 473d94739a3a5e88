// The reference routes (issue 2, point 2): GET /errors, /pricing, /operations, /openapi.json and
// /healthz, checked against the API spec (docs/api.md) (hard-coded in test/support/spec.ts) and, for the OpenAPI
// document, with a real OpenAPI 3.1 validator from the npm registry.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { client, freePort } from "../support/service";
import { useService } from "../support/use-service";
import { spawnBun, waitHealthy } from "../support/wait";
import {
  documentedOperations,
  specErrors,
  specErrorTypes,
  specOperationCredits,
  specUnsupportedConvertTargets,
  specUnsupportedOperations,
} from "../support/spec";
import { allRoutes } from "../../src/http/routes";

setDefaultTimeout(60_000);

const svc = useService();
let anon: ReturnType<typeof client>;

beforeAll(async () => {
  anon = client(svc.baseUrl);
});

describe("GET /errors", () => {
  test("lists every error code of the spec's table with the spec's status and type", async () => {
    const r = await anon("GET", "/errors");
    expect(r.status).toBe(200);
    const byCode = new Map<string, any>(r.json.data.map((e: any) => [e.code, e]));
    expect(Object.keys(specErrors).length).toBe(27);
    for (const [code, [status, type]] of Object.entries(specErrors)) {
      const e = byCode.get(code);
      expect({ code, present: !!e }).toEqual({ code, present: true });
      expect({ code, status: e.status, type: e.type }).toEqual({ code, status, type });
      expect(e.meaning.length).toBeGreaterThan(10);
      expect(e.doc_url).toMatch(new RegExp(`^https?://.+#${code}$`));
    }
  });

  test("every listed code has a spec error type and unique code; additions are marked as extensions", async () => {
    const { data } = (await anon("GET", "/errors")).json;
    expect(new Set(data.map((e: any) => e.code)).size).toBe(data.length);
    for (const e of data) {
      expect(specErrorTypes).toContain(e.type);
      expect(Number.isInteger(e.status)).toBe(true);
      expect({ code: e.code, origin: e.origin }).toEqual({
        code: e.code,
        origin: e.code in specErrors ? "spec" : "extension",
      });
    }
  });

  test("needs no key", async () => {
    const r = await client(svc.baseUrl, "svk_test_garbage")("GET", "/errors");
    expect(r.status).toBe(200);
  });
});

describe("GET /pricing", () => {
  test("has the spec's plan, prices and limits: 19 EUR, 2000 credits, 0.015 and 0.045 EUR, 60/30 rpm, 2 concurrent, 100 sandbox pages", async () => {
    const r = await anon("GET", "/pricing");
    expect(r.status).toBe(200);
    const p = r.json;
    expect(p.currency).toBe("EUR");
    expect(p.api_version).toBe("2026-09-01");
    const starter = p.plans.find((x: any) => x.id === "starter");
    expect(starter).toMatchObject({
      price_eur_per_month: 19,
      vat_included: true,
      included_credits_per_month: 2000,
      live_access: true,
    });
    expect(p.overage).toMatchObject({ eur_per_credit: 0.015, eur_per_ocr_page: 0.045 });
    expect(p.limits.live).toMatchObject({
      requests_per_minute: 60,
      concurrent_jobs: 2,
      included_credits_per_month: 2000,
      data_lifetime_hours: 24,
    });
    expect(p.limits.sandbox).toMatchObject({
      requests_per_minute: 30,
      concurrent_jobs: 2,
      pages_per_job: 100,
      billed: false,
      data_lifetime_hours: 24,
    });
    expect(p.limits).toMatchObject({
      webhook_endpoints_per_mode: 10,
      webhook_url_max_chars: 2048,
      webhook_description_max_chars: 255,
      metadata_max_keys: 20,
      file_ids_max_items: 50,
      idempotency_key_max_chars: 255,
      list_limit_max: 100,
      list_limit_default: 20,
      webhook_timeout_seconds: 10,
      webhook_attempts: 6,
      webhook_disable_after_consecutive_failures: 30,
    });
    expect(p.credits_per_page).toEqual(specOperationCredits);
  });

  test("GET /account reports the same limits as GET /pricing", async () => {
    const p = (await anon("GET", "/pricing")).json;
    for (const mode of ["test", "live"] as const) {
      const { key } = await svc.newKey({ mode });
      const a = (await client(svc.baseUrl, key)("GET", "/account")).json;
      const l = mode === "live" ? p.limits.live : p.limits.sandbox;
      expect(a.limits).toMatchObject({
        requests_per_minute: l.requests_per_minute,
        concurrent_jobs: l.concurrent_jobs,
        pages_per_job: l.pages_per_job,
      });
    }
  });
});

describe("GET /operations", () => {
  test("lists all 12 operations with their credits: 3 for ocr/searchable_pdf, 1 for convert/compress/redact, 0 otherwise", async () => {
    const { key } = await svc.newKey();
    const r = await client(svc.baseUrl, key)("GET", "/operations");
    expect(r.status).toBe(200);
    const supported = r.json.supported;
    expect(supported.map((o: any) => o.name).sort()).toEqual(Object.keys(specOperationCredits).sort());
    for (const o of supported) {
      expect({ name: o.name, credits: o.credits_per_page }).toEqual({
        name: o.name,
        credits: specOperationCredits[o.name]!,
      });
      expect(o.options).toBeDefined();
      expect(typeof o.summary).toBe("string");
    }
    expect(supported.find((o: any) => o.name === "merge").input).toBe("file_ids");
    const kinds = Object.fromEntries(supported.map((o: any) => [o.name, o.kind]));
    expect(kinds).toMatchObject({
      ocr: "ocr",
      searchable_pdf: "ocr",
      rotate: "page_ops",
      reorder: "page_ops",
      delete_pages: "page_ops",
      merge: "merge",
      redact: "redact",
    });
  });

  test("convert supports exactly the spec's five pairs", async () => {
    const { key } = await svc.newKey();
    const convert = (await client(svc.baseUrl, key)("GET", "/operations")).json.supported.find(
      (o: any) => o.name === "convert",
    );
    const pairs = convert.convert_pairs.map((p: any) => `${p.from}->${p.to}`).sort();
    expect(pairs).toEqual(["csv->xlsx", "docx->pdf", "pdf->docx", "pdf->jpg", "xlsx->csv"]);
  });

  test("lists watermark, flatten, sign and the convert targets pptx, png, html, txt as unsupported, each with a reason", async () => {
    const { key } = await svc.newKey();
    const un = (await client(svc.baseUrl, key)("GET", "/operations")).json.unsupported;
    for (const name of specUnsupportedOperations) {
      const u = un.find((x: any) => x.name === name);
      expect({ name, reason: typeof u?.reason }).toEqual({ name, reason: "string" });
      expect(u.reason.length).toBeGreaterThan(10);
    }
    for (const target of specUnsupportedConvertTargets) {
      const u = un.find((x: any) => x.operation === "convert" && x.target === target);
      expect({ target, reason: typeof u?.reason }).toEqual({ target, reason: "string" });
      expect(u.reason.length).toBeGreaterThan(10);
    }
    expect(un.length).toBe(specUnsupportedOperations.length + specUnsupportedConvertTargets.length);
  });

  test("needs a key", async () => {
    expect((await anon("GET", "/operations")).status).toBe(401);
  });
});

describe("GET /openapi.json", () => {
  let doc: any;
  beforeAll(async () => {
    const r = await anon("GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    doc = r.json;
  });

  test("validates as OpenAPI 3.1 with @seriousme/openapi-schema-validator", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    if (!result.valid) console.error(JSON.stringify(result.errors, null, 2).slice(0, 4000));
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
  });

  test("the validator is a real one: a broken copy of the document is refused", async () => {
    const broken = structuredClone(doc);
    delete broken.info;
    broken.paths["/account"].get.responses = "nope";
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  test('info.version is "2026-09-01" and the server URL ends in /api/v1', () => {
    expect(doc.info.version).toBe("2026-09-01");
    expect(doc.servers[0].url).toMatch(/\/api\/v1$/);
  });

  test("every route in src/http/routes.ts appears with its method, parameters and request body", () => {
    expect(allRoutes.length).toBeGreaterThanOrEqual(6);
    const documented = documentedOperations(doc);
    expect(documented.length).toBe(allRoutes.length);
    for (const r of allRoutes) {
      const path = r.path.replace(/:([a-z_]+)/g, "{$1}");
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect({ route: `${r.method} ${path}`, found: !!op }).toEqual({ route: `${r.method} ${path}`, found: true });
      expect(op.operationId).toBe(r.operationId);
      const params = op.parameters ?? [];
      const named = (where: string) =>
        params
          .filter((p: any) => p.in === where)
          .map((p: any) => p.name)
          .sort();
      expect(named("path")).toEqual(Object.keys(r.params?.properties ?? {}).sort());
      expect(named("path")).toEqual([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort());
      for (const p of params.filter((p: any) => p.in === "path")) expect(p.required).toBe(true);
      expect(named("query")).toEqual(Object.keys(r.query?.properties ?? {}).sort());
      // Generated from the same schema that validates requests.
      for (const [name, s] of Object.entries(r.query?.properties ?? {})) {
        const p = params.find((p: any) => p.in === "query" && p.name === name);
        expect(p.schema).toEqual(JSON.parse(JSON.stringify(s)));
      }
      if (r.body) expect(op.requestBody.content["application/json"].schema).toEqual(JSON.parse(JSON.stringify(r.body)));
      for (const h of r.headers ?? []) expect(named("header")).toContain(h.name);
      // Every response documents X-Request-Id; errors use the envelope.
      for (const [status, resp] of Object.entries<any>(op.responses)) {
        expect(resp.headers?.["X-Request-Id"]).toEqual({ $ref: "#/components/headers/X-Request-Id" });
        if (Number(status) >= 400)
          expect(resp.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
      }
      if (r.scope !== "none") {
        for (const code of ["401", "429"])
          expect({ route: r.operationId, code, documented: code in op.responses }).toEqual({
            route: r.operationId,
            code,
            documented: true,
          });
        expect(op.responses["429"].headers["Retry-After"]).toBeDefined();
        expect(op.responses["200"] ?? op.responses["201"] ?? op.responses["202"]).toBeDefined();
      }
      if (r.scope !== "none" && r.scope !== "any")
        expect(op.responses["403"].description).toContain("insufficient_scope");
    }
  });

  test("the authenticated routes document the authorization, X-Internal-Token and X-Account-Id header parameters", () => {
    for (const r of allRoutes.filter((r) => r.scope !== "none")) {
      const op = doc.paths[r.path.replace(/:([a-z_]+)/g, "{$1}")][r.method.toLowerCase()];
      const headers = op.parameters.filter((p: any) => p.in === "header");
      for (const name of ["authorization", "X-Internal-Token", "X-Account-Id"]) {
        const h = headers.find((p: any) => p.name.toLowerCase() === name.toLowerCase());
        expect({ route: r.operationId, name, found: !!h }).toEqual({ route: r.operationId, name, found: true });
        expect(h.required).toBe(false);
        expect(h.schema.type).toBe("string");
        expect(h.description.length).toBeGreaterThan(0);
      }
      expect(op.security).toEqual([{ bearerAuth: [] }]);
    }
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
  });

  test("the ErrorEnvelope component describes the spec's envelope", () => {
    const env = doc.components.schemas.ErrorEnvelope;
    expect(env).toBeDefined();
    const e = env.properties.error;
    for (const f of ["type", "code", "message", "doc_url", "request_id", "param"]) {
      expect(e.properties[f]).toBeDefined();
      expect(e.required).toContain(f);
    }
    expect(e.properties.type.anyOf.map((b: any) => b.const).sort()).toEqual([...specErrorTypes].sort());
    expect(e.properties.upgrade_url).toBeDefined();
    for (const h of [
      "X-Request-Id",
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "Retry-After",
      "Idempotent-Replayed",
      "X-Service-Sandbox",
    ]) {
      expect({ h, found: !!doc.components.headers[h] }).toEqual({ h, found: true });
    }
  });

  test("every $ref in the document resolves", () => {
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object")
        for (const [k, x] of Object.entries(v)) k === "$ref" && typeof x === "string" ? refs.push(x) : walk(x);
    };
    walk(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs)) {
      expect(ref.startsWith("#/")).toBe(true);
      const target = ref
        .slice(2)
        .split("/")
        .reduce<any>((o, k) => o?.[k], doc);
      expect({ ref, resolves: target !== undefined }).toEqual({ ref, resolves: true });
    }
  });
});

describe("GET /healthz", () => {
  test('answers 200 {"ok":true} outside the prefix, without a key', async () => {
    const r = await fetch(`${svc.origin}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ ok: true });
    expect(r.headers.get("x-request-id")).toMatch(/\S/);
    expect((await fetch(`${svc.baseUrl}/healthz`)).status).toBe(404);
  });

  test("answers 503 when the database is unreachable", async () => {
    const closedPort = await freePort();
    const port = await freePort();
    const api = spawnBun("src/roles/api.ts", [], {
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/nothing`,
      PORT: String(port),
      HOST: "127.0.0.1",
    });
    try {
      await waitHealthy(`http://127.0.0.1:${port}`, api, 503);
      const r = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(r.status).toBe(503);
      expect(((await r.json()) as { ok: boolean }).ok).toBe(false);
      expect(r.headers.get("x-request-id")).toMatch(/\S/);
      // The reference routes that need no database still work.
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/errors`)).status).toBe(200);
    } finally {
      expect(await api.stop()).toBe(0);
    }
  });
});
