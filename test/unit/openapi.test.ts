// src/http/openapi.ts: the OpenAPI 3.1 document is generated from the route declarations (the
// same TypeBox schemas that validate requests) and the error catalogue.
import { describe, expect, test } from "bun:test";
import { Type as T } from "@sinclair/typebox";
import { Validator } from "@seriousme/openapi-schema-validator";
import { buildOpenApi } from "../../src/http/openapi";
import { route, type RouteDef } from "../../src/modules/common/route";
import { errorCatalogue } from "../../src/domain/errors";

const Thing = T.Object({ id: T.String({ format: "uuid" }), n: T.Integer() });
const Body = T.Object(
  { name: T.String({ maxLength: 10 }), count: T.Optional(T.Integer({ minimum: 1 })) },
  { additionalProperties: false },
);

const routes: RouteDef[] = [
  route({
    method: "GET",
    path: "/things/:thing_id",
    operationId: "getThing",
    summary: "Get a thing",
    tag: "Things",
    scope: "documents:read",
    params: T.Object({ thing_id: T.String({ format: "uuid" }) }),
    query: T.Object({
      limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, description: "page size" })),
      mode: T.String(),
    }),
    responses: { 200: { description: "The thing.", schema: Thing } },
    errors: ["not_found", "result_expired", "mode_mismatch"],
    handler: () => ({ status: 200 }),
  }),
  route({
    method: "POST",
    path: "/things",
    operationId: "createThing",
    summary: "Create a thing",
    tag: "Things",
    scope: "jobs:write",
    body: Body,
    headers: [{ name: "Idempotency-Key", description: "dedupe", schema: T.String({ maxLength: 255 }) }],
    responses: { 202: { description: "Accepted.", schema: Thing, headers: ["Idempotent-Replayed"] } },
    errors: ["concurrency_limit"],
    handler: () => ({ status: 202 }),
  }),
  route({
    method: "GET",
    path: "/me",
    operationId: "me",
    summary: "Me",
    tag: "Account",
    scope: "any",
    responses: { 200: { description: "Me." } },
    errors: [],
    handler: () => ({ status: 200 }),
  }),
  route({
    method: "GET",
    path: "/public",
    operationId: "pub",
    summary: "Public",
    tag: "Reference",
    scope: "none",
    responses: { 200: { description: "Public.", contentType: "text/plain", schema: T.String() } },
    errors: [],
    handler: () => ({ status: 200 }),
  }),
];

const doc = buildOpenApi(routes) as any;
const op = (path: string, method: string) => doc.paths[path][method];

describe("buildOpenApi", () => {
  test("is a valid OpenAPI 3.1 document with the interface version", async () => {
    const result = await new Validator().validate(doc);
    if (!result.valid) console.error(result.errors);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("2026-09-01");
  });

  test("Elysia path syntax becomes OpenAPI templates, with required path parameters", () => {
    expect(Object.keys(doc.paths).sort()).toEqual(["/me", "/public", "/things", "/things/{thing_id}"]);
    const p = op("/things/{thing_id}", "get").parameters.find((x: any) => x.in === "path");
    expect(p).toEqual({ name: "thing_id", in: "path", required: true, schema: { type: "string", format: "uuid" } });
  });

  test("query parameters carry their schema, description and required flag", () => {
    const q = op("/things/{thing_id}", "get").parameters.filter((x: any) => x.in === "query");
    expect(q.find((x: any) => x.name === "limit")).toMatchObject({
      required: false,
      description: "page size",
      schema: { type: "integer", minimum: 1, maximum: 100 },
    });
    expect(q.find((x: any) => x.name === "mode")).toMatchObject({ required: true, schema: { type: "string" } });
  });

  test("the request body is the validating schema itself", () => {
    const rb = op("/things", "post").requestBody;
    expect(rb.required).toBe(true);
    expect(rb.content["application/json"].schema).toEqual(JSON.parse(JSON.stringify(Body)));
    expect(rb.content["application/json"].schema.additionalProperties).toBe(false);
  });

  test("authenticated routes: bearer security, scope, the three optional auth headers, 401/403/429 errors", () => {
    for (const [path, method, scope] of [
      ["/things/{thing_id}", "get", "documents:read"],
      ["/things", "post", "jobs:write"],
      ["/me", "get", "any"],
    ] as const) {
      const o = op(path, method);
      expect(o.security).toEqual([{ bearerAuth: [] }]);
      expect(o["x-required-scope"]).toBe(scope);
      const headers = o.parameters.filter((x: any) => x.in === "header").map((x: any) => x.name);
      expect(headers).toEqual(expect.arrayContaining(["authorization", "X-Internal-Token", "X-Account-Id"]));
      for (const s of ["401", "403", "429", "500"]) expect(o.responses[s]).toBeDefined();
      expect(o.responses["401"].description).toContain("authentication_required");
      expect(o.responses["401"].description).toContain("invalid_api_key");
      expect(o.responses["403"].description).toContain("plan_required");
      expect(o.responses["403"].description).toContain("email_unverified");
      expect(o.responses["429"].headers["Retry-After"]).toBeDefined();
      expect(o.responses["200"]?.headers ?? o.responses["202"]?.headers).toHaveProperty("X-RateLimit-Limit");
    }
    expect(op("/things", "post").responses["403"].description).toContain("insufficient_scope");
    expect(op("/me", "get").responses["403"].description).not.toContain("insufficient_scope");
  });

  test("a route without authentication has no security, no auth headers and no auth errors", () => {
    const o = op("/public", "get");
    expect(o.security).toEqual([]);
    expect(o["x-required-scope"]).toBeUndefined();
    expect(o.parameters).toEqual([]);
    expect(Object.keys(o.responses).sort()).toEqual(["200", "500"]);
    expect(o.responses["200"].content["text/plain"].schema).toEqual({ type: "string" });
    expect(o.responses["200"].headers).not.toHaveProperty("X-RateLimit-Limit");
  });

  test("error codes are grouped by status, each response pointing at the ErrorEnvelope", () => {
    const o = op("/things/{thing_id}", "get");
    expect(o.responses["404"].description).toContain("not_found");
    expect(o.responses["404"].description).toContain("result_expired");
    expect(o.responses["422"].description).toContain("validation_error");
    expect(o.responses["403"].description).toContain("mode_mismatch");
    for (const [status, r] of Object.entries<any>(o.responses)) {
      if (Number(status) >= 400)
        expect(r.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ErrorEnvelope" });
    }
    // No validation error is documented where nothing is validated.
    expect(op("/me", "get").responses["422"]).toBeUndefined();
    expect(op("/things", "post").responses["429"].description).toContain("concurrency_limit");
    expect(op("/things", "post").responses["202"].headers).toHaveProperty("Idempotent-Replayed");
    expect(op("/things", "post").parameters.find((p: any) => p.name === "Idempotency-Key")).toMatchObject({
      in: "header",
      schema: { type: "string", maxLength: 255 },
    });
  });

  test("every documented code exists in the error catalogue with that status", () => {
    let seen = 0;
    for (const item of Object.values<any>(doc.paths)) {
      for (const o of Object.values<any>(item)) {
        for (const [status, r] of Object.entries<any>(o.responses)) {
          if (Number(status) < 400) continue;
          for (const m of (r.description as string).matchAll(/(?:^|\n\n)`([a-z_]+)`:/g)) {
            const code = m[1] as keyof typeof errorCatalogue;
            expect({ code, status: errorCatalogue[code]?.status }).toEqual({ code, status: Number(status) });
            seen++;
          }
        }
      }
    }
    expect(seen).toBeGreaterThan(20);
  });

  test("components: the ErrorEnvelope without TypeBox markers, the bearer scheme and the response headers", () => {
    const env = doc.components.schemas.ErrorEnvelope;
    expect(env.$id).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain("[Kind]");
    expect(env.properties.error.required).toEqual(
      expect.arrayContaining(["type", "code", "message", "doc_url", "request_id", "param"]),
    );
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining([
        "X-Request-Id",
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "Retry-After",
      ]),
    );
  });
});
