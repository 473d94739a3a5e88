// Per-request state shared between the request hooks, the route wrapper and the error
// handler: the request id, the authenticated key, and the headers every response must carry.
import { randomBytes } from "node:crypto";
import type { AuthenticatedKey } from "../auth/authenticate";

export interface RequestContext {
  requestId: string;
  auth: AuthenticatedKey | null;
  /** Headers added to every response of this request (request id, rate limit). */
  headers: Record<string, string>;
}

const contexts = new WeakMap<Request, RequestContext>();

export function newRequestId(): string {
  return "req_" + randomBytes(12).toString("hex");
}

export function contextOf(request: Request): RequestContext {
  let ctx = contexts.get(request);
  if (!ctx) {
    const requestId = newRequestId();
    ctx = { requestId, auth: null, headers: { "x-request-id": requestId } };
    contexts.set(request, ctx);
  }
  return ctx;
}
