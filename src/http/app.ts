// The Elysia application: request ids, the error envelope for every failure (unknown routes,
// wrong methods, malformed input, faults), and the route wrapper that authenticates,
// rate-limits, authorizes and validates before a handler runs.
import { Elysia } from "elysia";
import type { RouteDef, Reply } from "../modules/common/route";
import { errorBody } from "../modules/common/envelope";
import { contextOf } from "./context";
import { check } from "../domain/schema-check";
import { checkQuery, readJson } from "../modules/common/read-request";
import { authenticate } from "../auth/authenticate";
import { authorize } from "../auth/authorize";
import { takeToken, rateLimitedError } from "./rate-limit";
import { db, isDatabaseUnavailable } from "../db/client";
import { blobStore } from "../storage/blobs";
import { log } from "../log";
import { metricsAuthorized, renderMetrics } from "../modules/metrics/collect";
import { ApiError } from "../domain/errors";

export const apiPrefix = "/api/v1";

function json(status: number, body: unknown, headers: Record<string, string>): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }) },
  });
}

function errorResponse(err: ApiError, headers: Record<string, string>, requestId: string): Response {
  return json(err.status, errorBody(err.code, err.message, requestId, err.param, err.extra), {
    ...headers,
    ...err.headers,
  });
}

function pathPattern(path: string): RegExp {
  const re = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\?:[a-z_]+/g, "[^/]+");
  return new RegExp(`^${re}/?$`);
}

async function runRoute(def: RouteDef, request: Request, params: Record<string, string>): Promise<Response> {
  const ctx = contextOf(request);
  if (def.scope !== "none") {
    const auth = await authenticate(request.headers.get("authorization"));
    ctx.auth = auth;
    const decision = await takeToken(auth.keyId, auth.mode);
    Object.assign(ctx.headers, decision.headers);
    if (!decision.allowed) throw rateLimitedError(decision);
    authorize(auth, def.scope);
  }
  const validParams = def.params ? check(def.params, params) : {};
  const query = checkQuery(def.query, new URL(request.url).searchParams);
  let body: unknown;
  if (def.body) body = check(def.body, await readJson(request));
  const out = await def.handler({
    request,
    requestId: ctx.requestId,
    auth: ctx.auth!,
    params: validParams,
    query,
    body,
  });
  if (out instanceof Response) {
    for (const [k, v] of Object.entries(ctx.headers)) out.headers.set(k, v);
    return out;
  }
  const reply = out as Reply;
  return json(reply.status, reply.body, { ...ctx.headers, ...(reply.headers ?? {}) });
}

export function buildApp(routes: RouteDef[], extra?: (app: any) => void) {
  const patterns = routes.map((r) => ({ re: pathPattern(apiPrefix + r.path), method: r.method }));
  const app = new Elysia({ normalize: false })
    .onRequest(({ request, set }) => {
      const ctx = contextOf(request);
      set.headers["x-request-id"] = ctx.requestId;
      if (headerBytes(request) > maxHeaderBytes) {
        throw new ApiError("headers_too_large", `The request headers are larger than ${maxHeaderBytes / 1024} KiB.`);
      }
    })
    .onError(({ request, code, error, set }) => {
      const ctx = contextOf(request);
      let err: ApiError;
      if (error instanceof ApiError) err = error;
      else if (code === "NOT_FOUND") {
        const path = new URL(request.url).pathname;
        const allowed = [...new Set(patterns.filter((p) => p.re.test(path)).map((p) => p.method))];
        err = allowed.length
          ? new ApiError(
              "method_not_allowed",
              `${request.method} is not allowed on ${path}; use ${allowed.join(", ")}.`,
              null,
              {},
              { allow: allowed.join(", ") },
            )
          : new ApiError("not_found", `No route ${request.method} ${path}.`);
      } else if (isDatabaseUnavailable(error)) {
        log.error("database unavailable", { request_id: ctx.requestId, error: String(error) });
        err = new ApiError(
          "queue_unavailable",
          "The job queue (database) is unreachable; retry with backoff and the same Idempotency-Key.",
          null,
          {},
          { "retry-after": "2" },
        );
      } else if ((error as { code?: string })?.code === "ENOSPC") {
        log.error("storage full", { request_id: ctx.requestId, error: String(error) });
        err = new ApiError(
          "storage_full",
          "The service's storage is full; nothing was stored. Retry later.",
          null,
          {},
          { "retry-after": "60" },
        );
      } else if (code === "PARSE") err = new ApiError("validation_error", "Malformed request body.");
      else if (code === "VALIDATION") err = new ApiError("validation_error", "Invalid request.");
      else {
        log.error("unhandled error", {
          request_id: ctx.requestId,
          code: String(code),
          error: String((error as Error)?.stack ?? error),
        });
        err = new ApiError(
          "internal_error",
          "Something went wrong on our side. Retry later; quote the request id if it persists.",
        );
      }
      // Elysia keeps headers set before the failure; the error response replaces them.
      for (const k of Object.keys(set.headers)) delete (set.headers as Record<string, unknown>)[k];
      return errorResponse(err, ctx.headers, ctx.requestId);
    });
  app.get("/healthz", async () => {
    try {
      await db()`SELECT 1`;
      return json(200, { ok: true }, {});
    } catch {
      return json(503, { ok: false }, {});
    }
  });
  // An extension (not in the contract): ready to serve = Postgres and the blob store both answer
  // within 3 s (a load balancer's or Kubernetes' readiness probe); /healthz stays the contract's
  // database-only check. 503 names what failed.
  app.get("/readyz", async () => {
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, Bun.sleep(3000).then(() => Promise.reject(new Error("timed out")))]);
    const [database, store] = await Promise.all([
      within(db()`SELECT 1`).then(
        () => "ok",
        () => "unreachable",
      ),
      within(blobStore().size("readyz-probe")).then(
        () => "ok",
        () => "unreachable",
      ),
    ]);
    const ok = database === "ok" && store === "ok";
    return json(ok ? 200 : 503, { ok, database, store }, { "cache-control": "no-store" });
  });
  // Outside /api/v1: for operators' scrapers, not API keys (METRICS_TOKEN guards it if set).
  app.get("/metrics", async ({ request }: { request: Request }) => {
    if (!metricsAuthorized(request.headers.get("authorization")))
      return new Response("unauthorized\n", { status: 401, headers: { "www-authenticate": "Bearer" } });
    return new Response(await renderMetrics(), {
      status: 200,
      headers: { "content-type": "text/plain; version=0.0.4; charset=utf-8" },
    });
  });
  for (const def of routes) {
    app.route(
      def.method,
      apiPrefix + def.path,
      ({ request, params }: { request: Request; params: Record<string, string> }) => runRoute(def, request, params),
      {
        parse: "none",
      } as never,
    );
  }
  extra?.(app);
  return app;
}

/**
 * The service's own header limit, answered with the error envelope. The API process runs with
 * Bun's parser limit far above it (--max-http-header-size, set where src/main.ts starts it), because Bun
 * answers a bare 431 itself, before any application code runs, for heads over its limit.
 */
export const maxHeaderBytes = 32 * 1024;

function headerBytes(request: Request): number {
  let n = request.method.length + request.url.length + 12;
  for (const [k, v] of request.headers) n += k.length + v.length + 4;
  return n;
}
