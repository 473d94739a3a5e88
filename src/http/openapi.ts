// Generates the OpenAPI 3.1 document from the route declarations, the same TypeBox schemas
// that validate requests, and the error catalogue. Nothing here is written by hand twice.
import { Type as T, type TSchema } from "@sinclair/typebox";
import type { RouteDef } from "../modules/common/route";
import { errorCatalogue, type ErrorCode } from "../domain/errors";
import { operations, publishedOptionsSchema } from "../domain/operations";
import { apiVersion } from "../domain/pricing";
import { config } from "../config";

export const ErrorEnvelope = T.Object(
  {
    error: T.Object(
      {
        type: T.Union(
          [
            "api_error",
            "authentication_error",
            "billing_error",
            "conflict_error",
            "idempotency_error",
            "invalid_request_error",
            "not_found_error",
            "permission_error",
            "rate_limit_error",
          ].map((v) => T.Literal(v)),
        ),
        code: T.String({ description: "stable, machine-readable; see GET /errors" }),
        message: T.String(),
        doc_url: T.String({ format: "uri" }),
        request_id: T.Union([T.String(), T.Null()], { description: "equals the X-Request-Id response header" }),
        param: T.Union([T.String(), T.Null()], { description: "on validation errors, the offending field" }),
        upgrade_url: T.Optional(T.String({ format: "uri", description: "plan_required only" })),
        pages: T.Optional(T.Integer({ description: "billing errors only" })),
        remaining: T.Optional(T.Integer({ description: "billing errors only" })),
      },
      { additionalProperties: true },
    ),
  },
  { $id: "ErrorEnvelope" },
);

const responseHeaders: Record<string, { description: string; schema: object }> = {
  "X-Request-Id": { description: "Identifies the request; equals error.request_id.", schema: { type: "string" } },
  "X-RateLimit-Limit": { description: "Requests allowed per minute for the key.", schema: { type: "integer" } },
  "X-RateLimit-Remaining": { description: "Requests left in the current window.", schema: { type: "integer" } },
  "X-RateLimit-Reset": { description: "Seconds until the bucket is full again.", schema: { type: "integer" } },
  "Retry-After": { description: "On 429 only: seconds to wait.", schema: { type: "integer" } },
  "Idempotent-Replayed": {
    description: "`true` when a stored idempotent response is returned.",
    schema: { type: "string", enum: ["true"] },
  },
  "X-Service-Sandbox": {
    description: "`true` on sandbox result downloads.",
    schema: { type: "string", enum: ["true"] },
  },
  Allow: { description: "On 405: the methods the path accepts.", schema: { type: "string" } },
};

/** Strip TypeBox's symbols and our $id markers so the output is plain JSON Schema. */
function plain(schema: TSchema): object {
  const out = JSON.parse(JSON.stringify(schema));
  delete out.$id;
  return out;
}

const authErrors: ErrorCode[] = [
  "authentication_required",
  "invalid_api_key",
  "email_unverified",
  "plan_required",
  "rate_limited",
];

function headerRefs(names: string[]) {
  return Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
}

export function buildOpenApi(routes: RouteDef[]): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([a-z_]+)/g, "{$1}");
    const authed = r.scope !== "none";
    const parameters: object[] = [];
    for (const [name, s] of Object.entries(r.params?.properties ?? {}))
      parameters.push({ name, in: "path", required: true, schema: plain(s as TSchema) });
    for (const [name, s] of Object.entries(r.query?.properties ?? {})) {
      parameters.push({
        name,
        in: "query",
        required: (r.query!.required ?? []).includes(name),
        schema: plain(s as TSchema),
        description: (s as { description?: string }).description,
      });
    }
    if (authed) {
      parameters.push(
        {
          name: "authorization",
          in: "header",
          required: false,
          description: "`Bearer <API key>`; see securitySchemes.",
          schema: { type: "string" },
        },
        {
          name: "X-Internal-Token",
          in: "header",
          required: false,
          description:
            "Accepted for compatibility and ignored: the spec does not define its meaning, so it never changes the account or mode a request acts for.",
          schema: { type: "string" },
        },
        {
          name: "X-Account-Id",
          in: "header",
          required: false,
          description: "Accepted for compatibility and ignored: the API key alone decides the account and mode.",
          schema: { type: "string" },
        },
      );
    }
    for (const h of r.headers ?? [])
      parameters.push({
        name: h.name,
        in: "header",
        required: false,
        description: h.description,
        schema: plain(h.schema),
      });

    const stdHeaders = authed
      ? ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
      : ["X-Request-Id"];
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) {
      responses[status] = {
        description: doc.description,
        headers: headerRefs([...stdHeaders, ...(doc.headers ?? [])]),
        ...(doc.schema ? { content: { [doc.contentType ?? "application/json"]: { schema: plain(doc.schema) } } } : {}),
      };
    }
    const codes = new Set<ErrorCode>([
      ...(authed ? authErrors : []),
      ...(r.scope !== "none" && r.scope !== "any" ? (["insufficient_scope"] as ErrorCode[]) : []),
      ...r.errors,
      "internal_error",
    ]);
    if (r.params || r.query || r.body) codes.add("validation_error");
    const byStatus = new Map<number, ErrorCode[]>();
    for (const c of codes)
      byStatus.set(errorCatalogue[c].status, [...(byStatus.get(errorCatalogue[c].status) ?? []), c]);
    for (const [status, list] of byStatus) {
      const extra = status === 429 ? ["Retry-After"] : [];
      responses[String(status)] = {
        description: list.map((c) => `\`${c}\`: ${errorCatalogue[c].meaning}`).join("\n\n"),
        headers: headerRefs([...stdHeaders, ...extra]),
        content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorEnvelope" } } },
      };
    }
    let requestBody: object | undefined;
    if (r.body) requestBody = { required: true, content: { "application/json": { schema: plain(r.body) } } };
    if (r.rawBody) {
      requestBody = {
        required: true,
        description: r.rawBody.map((b) => b.description).join(" "),
        content: Object.fromEntries(r.rawBody.map((b) => [b.contentType, { schema: plain(b.schema) }])),
      };
    }
    paths[path] ??= {};
    paths[path]![r.method.toLowerCase()] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      ...(r.extension ? { "x-extension": true } : {}),
      ...(authed ? { security: [{ bearerAuth: [] }], "x-required-scope": r.scope } : { security: [] }),
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Document Processing API",
      version: apiVersion,
      description:
        "Asynchronous document processing: upload files, create jobs, poll or receive signed webhooks, download results. Every error uses the ErrorEnvelope schema.",
      license: { name: "AGPL-3.0-or-later", identifier: "AGPL-3.0-or-later" },
    },
    servers: [{ url: config.baseUrl }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description: "`svk_live_...` (live) or `svk_test_...` (sandbox) keys.",
        },
      },
      schemas: {
        ErrorEnvelope: plain(ErrorEnvelope),
        // `options` of POST /jobs per operation (the same schemas GET /operations lists and
        // POST /jobs validates with); options marked x-extension are not in the spec.
        ...Object.fromEntries(
          Object.values(operations).map((o) => [
            `Options_${o.name}`,
            { ...publishedOptionsSchema(o), description: `\`options\` of POST /jobs for operation ${o.name}.` },
          ]),
        ),
      },
      headers: Object.fromEntries(
        Object.entries(responseHeaders).map(([k, v]) => [k, { description: v.description, schema: v.schema }]),
      ),
    },
  };
}
