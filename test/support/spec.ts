// Facts copied by hand from the API specification (docs/api.md states them too), so that tests check the service against the
// specification rather than against the service's own catalogues.

/** The API spec (docs/api.md), Errors: code -> [HTTP status, type]. 27 codes. */
export const specErrors: Record<string, [number, string]> = {
  authentication_required: [401, "authentication_error"],
  invalid_api_key: [401, "authentication_error"],
  email_unverified: [403, "permission_error"],
  plan_required: [403, "permission_error"],
  insufficient_scope: [403, "permission_error"],
  mode_mismatch: [403, "permission_error"],
  validation_error: [422, "invalid_request_error"],
  operation_unsupported: [422, "invalid_request_error"],
  invalid_options: [422, "invalid_request_error"],
  unsupported_file_type: [415, "invalid_request_error"],
  file_too_large: [413, "invalid_request_error"],
  file_not_ready: [409, "conflict_error"],
  page_limit_exceeded: [422, "invalid_request_error"],
  insufficient_credits: [402, "billing_error"],
  spending_cap_reached: [402, "billing_error"],
  concurrency_limit: [429, "rate_limit_error"],
  rate_limited: [429, "rate_limit_error"],
  idempotency_key_reused: [422, "idempotency_error"],
  idempotency_in_progress: [409, "conflict_error"],
  not_found: [404, "not_found_error"],
  job_not_finished: [409, "conflict_error"],
  no_downloadable_result: [409, "conflict_error"],
  result_expired: [404, "not_found_error"],
  presigned_unavailable: [501, "invalid_request_error"],
  webhook_delivery_failed: [502, "api_error"],
  queue_unavailable: [503, "api_error"],
  internal_error: [500, "api_error"],
};

/** The API spec (docs/api.md), Errors: the allowed values of error.type. */
export const specErrorTypes = [
  "api_error",
  "authentication_error",
  "billing_error",
  "conflict_error",
  "idempotency_error",
  "invalid_request_error",
  "not_found_error",
  "permission_error",
  "rate_limit_error",
];

export const specScopes = [
  "documents:read",
  "documents:write",
  "jobs:read",
  "jobs:write",
  "usage:read",
  "webhooks:manage",
];

/** The API spec (docs/api.md), Endpoints: "METHOD /path" (OpenAPI path syntax) -> scope (`any`, `none` or a scope). */
export const specRouteScopes: Record<string, string> = {
  "POST /files": "documents:write",
  "GET /files": "documents:read",
  "GET /files/{file_id}": "documents:read",
  "POST /files/{file_id}/complete": "documents:write",
  "DELETE /files/{file_id}": "documents:write",
  "POST /jobs": "jobs:write",
  "GET /jobs": "jobs:read",
  "GET /jobs/{job_id}": "jobs:read",
  "POST /jobs/{job_id}/cancel": "jobs:write",
  "GET /jobs/{job_id}/result": "jobs:read",
  "POST /webhooks": "webhooks:manage",
  "GET /webhooks": "webhooks:manage",
  "GET /webhooks/{webhook_id}": "webhooks:manage",
  "PATCH /webhooks/{webhook_id}": "webhooks:manage",
  "DELETE /webhooks/{webhook_id}": "webhooks:manage",
  "POST /webhooks/{webhook_id}/test": "webhooks:manage",
  "GET /webhooks/{webhook_id}/deliveries": "webhooks:manage",
  "GET /account": "any",
  "GET /usage": "usage:read",
  "GET /operations": "any",
  "GET /errors": "none",
  "GET /pricing": "none",
  "GET /openapi.json": "none",
};

/** The API spec (docs/api.md), operation catalogue: credits per page. */
export const specOperationCredits: Record<string, number> = {
  ocr: 3,
  searchable_pdf: 3,
  convert: 1,
  compress: 1,
  redact: 1,
  merge: 0,
  split: 0,
  rotate: 0,
  reorder: 0,
  delete_pages: 0,
  protect: 0,
  unlock: 0,
};

export const specUnsupportedOperations = ["watermark", "flatten", "sign"];
export const specUnsupportedConvertTargets = ["pptx", "png", "html", "txt"];

/** The routes a running service documents, from its OpenAPI document: [method, path, operation]. */
export function documentedOperations(doc: any): { method: string; path: string; op: any; key: string }[] {
  const out: { method: string; path: string; op: any; key: string }[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const [m, op] of Object.entries<any>(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(m)) continue;
      out.push({ method: m.toUpperCase(), path, op, key: `${m.toUpperCase()} ${path}` });
    }
  }
  return out;
}

/** Fills `{param}` placeholders with a fresh uuid. */
export function concretePath(path: string): string {
  return path.replace(/\{[^}]+\}/g, () => crypto.randomUUID());
}
