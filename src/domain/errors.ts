// The error catalogue: every error code the API or a failed job can report, defined once, and
// ApiError, which carries one of them from any layer up to the HTTP layer's envelope.

export type ErrorType =
  | "api_error"
  | "authentication_error"
  | "billing_error"
  | "conflict_error"
  | "idempotency_error"
  | "invalid_request_error"
  | "not_found_error"
  | "permission_error"
  | "rate_limit_error";

export interface ErrorDefinition {
  status: number;
  type: ErrorType;
  /** When the code is used. */
  meaning: string;
  /** "spec" codes are the API contract's own; "extension" codes are this service's documented additions. */
  origin: "spec" | "extension";
  /** "http" codes answer a request; "job" codes appear in a failed job's `error.code`. */
  usedIn: readonly ("http" | "job")[];
}

function def<const U extends readonly ("http" | "job")[] = readonly ["http"]>(
  status: number,
  type: ErrorType,
  meaning: string,
  origin: "spec" | "extension" = "spec",
  usedIn?: U,
): ErrorDefinition & { usedIn: U } {
  return { status, type, meaning, origin, usedIn: (usedIn ?? ["http"]) as U };
}

export const errorCatalogue = {
  authentication_required: def(401, "authentication_error", "No Bearer key was sent in the Authorization header."),
  invalid_api_key: def(401, "authentication_error", "The key is unknown, revoked or expired."),
  email_unverified: def(403, "permission_error", "The account's email address is not verified."),
  plan_required: def(
    403,
    "permission_error",
    "A live key was used by an account without the starter API plan; `upgrade_url` says where to subscribe.",
  ),
  insufficient_scope: def(
    403,
    "permission_error",
    "The key lacks the scope the route needs; `param` names the missing scope.",
  ),
  mode_mismatch: def(403, "permission_error", "The object belongs to the other mode (live vs sandbox)."),
  validation_error: def(
    422,
    "invalid_request_error",
    "Malformed body or parameters; `param` names the offending field.",
  ),
  operation_unsupported: def(
    422,
    "invalid_request_error",
    "The operation or convert target has no handler; the message gives the reason; `param` is `operation` (or `options.target`).",
    "spec",
    ["http"],
  ),
  invalid_options: def(
    422,
    "invalid_request_error",
    "Options invalid for the operation (for a job: e.g. a wrong unlock password); `param` names the option.",
    "spec",
    ["http", "job"],
  ),
  unsupported_file_type: def(
    415,
    "invalid_request_error",
    "The file type is not accepted, or the bytes do not match the declared type.",
    "spec",
    ["http", "job"],
  ),
  file_too_large: def(
    413,
    "invalid_request_error",
    "The upload is larger than the maximum upload size (MAX_UPLOAD_BYTES).",
  ),
  file_not_ready: def(409, "conflict_error", "A presigned upload was used before POST /files/{file_id}/complete."),
  page_limit_exceeded: def(
    422,
    "invalid_request_error",
    "The job has more pages than the plan allows per job.",
    "spec",
    ["http", "job"],
  ),
  insufficient_credits: def(
    402,
    "billing_error",
    "Not enough page credits and overage is unavailable; carries `pages` and `remaining`.",
  ),
  spending_cap_reached: def(
    402,
    "billing_error",
    "The job would push overage past the account's spending cap; carries `pages` and `remaining`.",
  ),
  concurrency_limit: def(
    429,
    "rate_limit_error",
    "The key already has the maximum number of queued or running jobs; see Retry-After.",
  ),
  rate_limited: def(429, "rate_limit_error", "The key's request token bucket is empty; see Retry-After."),
  idempotency_key_reused: def(
    422,
    "idempotency_error",
    "The Idempotency-Key was already used with a different request body.",
  ),
  idempotency_in_progress: def(
    409,
    "conflict_error",
    "The original request with this Idempotency-Key is still being processed.",
  ),
  not_found: def(
    404,
    "not_found_error",
    "No such file, job, webhook or route for this account and mode; for a job: an input file was deleted or expired before the job ran.",
    "spec",
    ["http", "job"],
  ),
  job_not_finished: def(409, "conflict_error", "The result was requested before the job succeeded."),
  no_downloadable_result: def(
    409,
    "conflict_error",
    "The job produced no downloadable file (e.g. OCR blocks); use format=json.",
  ),
  result_expired: def(404, "not_found_error", "The result was removed after its time-to-live."),
  presigned_unavailable: def(
    501,
    "invalid_request_error",
    "Presigned URLs need an object store, and none is configured.",
  ),
  webhook_delivery_failed: def(502, "api_error", "The endpoint did not accept the test event with a 2xx answer."),
  queue_unavailable: def(
    503,
    "api_error",
    "The job queue is unreachable; safe to retry with the same Idempotency-Key.",
  ),
  internal_error: def(
    500,
    "api_error",
    "Server fault; for a job, the worker running it died twice or hit an unexpected fault.",
    "spec",
    ["http", "job"],
  ),

  // Extensions: documented additions where the spec does not name a code.
  method_not_allowed: def(
    405,
    "invalid_request_error",
    "The path exists but not with this HTTP method; the Allow header lists the methods.",
    "extension",
  ),
  webhook_limit_reached: def(
    409,
    "conflict_error",
    "The mode already has the maximum of 10 webhook endpoints.",
    "extension",
  ),
  webhook_not_subscribed: def(
    409,
    "conflict_error",
    "POST /webhooks/{webhook_id}/test on an endpoint whose `events` leave out `webhook.test`; add it (or subscribe to all) first.",
    "extension",
  ),
  file_unreadable: def(
    422,
    "invalid_request_error",
    "The input document is damaged beyond repair and cannot be processed.",
    "extension",
    ["http", "job"],
  ),
  file_encrypted: def(
    422,
    "invalid_request_error",
    "The input is password-protected; run the `unlock` operation on it first.",
    "extension",
    ["job"],
  ),
  page_too_large: def(
    422,
    "invalid_request_error",
    "A page would render larger than the pixel cap; lower `dpi`.",
    "extension",
    ["job"],
  ),
  job_timeout: def(
    500,
    "api_error",
    "The job exceeded the per-job wall-clock limit (JOB_TIMEOUT_S) and was stopped.",
    "extension",
    ["job"],
  ),
  store_unavailable: def(
    503,
    "api_error",
    "The object store (S3_*) is unreachable or failed; nothing was half-written, safe to retry. A job that cannot read its input or store its result fails with this code.",
    "extension",
    ["http", "job"],
  ),
  upload_size_mismatch: def(
    400,
    "invalid_request_error",
    "POST /files/{file_id}/complete: the uploaded object's size differs from the declared `size_bytes`; the object and the file are deleted.",
    "extension",
  ),
  request_timeout: def(
    408,
    "invalid_request_error",
    "The request body was not received within UPLOAD_TIMEOUT_S (default 900 s), or sent nothing for BODY_STALL_TIMEOUT_S (default 10 s); nothing was stored.",
    "extension",
  ),
  headers_too_large: def(
    431,
    "invalid_request_error",
    "The request headers (names, values and the request line) exceed 32 KiB.",
    "extension",
  ),
  storage_full: def(
    503,
    "api_error",
    "The service's disk (DATA_DIR) is full; nothing was stored. Retry later (see Retry-After).",
    "extension",
  ),
  conversion_failed: def(
    422,
    "invalid_request_error",
    "The converter could not produce an output from this input; also a searchable PDF asked for as PDF/A-2b (`pdfa`) of a document with what PDF/A-2b forbids, which the message names.",
    "extension",
    ["job"],
  ),
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof errorCatalogue;

/** Thrown by any layer; the HTTP layer turns it into the spec's envelope (modules/common/envelope.ts). */
export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Extra envelope fields, e.g. upgrade_url, pages, remaining. */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers, e.g. Retry-After, Allow. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

/** The codes a failed job may carry (`usedIn` "job" in the catalogue). */
export type JobErrorCode = {
  [C in ErrorCode]: "job" extends (typeof errorCatalogue)[C]["usedIn"][number] ? C : never;
}[ErrorCode];

/**
 * A job's failure as the job shows it: a job error code and a message for the client. Thrown by
 * executors and the converters for failures of their own; the worker turns every other
 * rejection into one (src/worker/errors.ts `toJobError`) before it stores it.
 */
export class JobError extends Error {
  constructor(
    readonly code: JobErrorCode,
    message: string,
  ) {
    super(message);
  }
}
