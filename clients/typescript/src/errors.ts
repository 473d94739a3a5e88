// The client's errors: ApiError carries the service's error envelope (type, code, param,
// requestId, status); the others name failures that happen on the client's side.

/** Fields of the service's error envelope (`{"error": {...}}`), see GET /api/v1/errors. */
export interface ErrorBody {
  type: string;
  code: string;
  message: string;
  doc_url?: string;
  request_id?: string | null;
  param?: string | null;
  [extra: string]: unknown;
}

/** A request the service answered with an error status. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly docUrl: string | null;
  /** Seconds from the Retry-After header (429, 503), when present. */
  readonly retryAfterS: number | null;
  /** The whole `error` object, including fields such as `upgrade_url`, `pages`, `remaining`. */
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody, headers?: Headers) {
    super(`${status} ${body.code}: ${body.message}`);
    this.name = "ApiError";
    this.status = status;
    this.type = body.type;
    this.code = body.code;
    this.param = body.param ?? null;
    this.requestId = body.request_id ?? headers?.get("x-request-id") ?? null;
    this.docUrl = body.doc_url ?? null;
    const ra = headers?.get("retry-after");
    this.retryAfterS = ra && /^\d+$/.test(ra) ? Number(ra) : null;
    this.body = body;
  }

  /** Builds the error from a response; a body that is not the envelope (a proxy's page) still gives one. */
  static async from(res: Response): Promise<ApiError> {
    const text = await res.text();
    let body: ErrorBody | undefined;
    try {
      const parsed = JSON.parse(text) as { error?: ErrorBody };
      if (parsed?.error && typeof parsed.error.code === "string") body = parsed.error;
    } catch {}
    body ??= {
      type: "api_error",
      code: `http_${res.status}`,
      message: text.slice(0, 500) || res.statusText,
      request_id: res.headers.get("x-request-id"),
      param: null,
    };
    return new ApiError(res.status, body, res.headers);
  }
}

/** The service could not be reached (after the configured retries). */
export class ConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

/** `jobs.wait` gave up before the job reached a final state; the job keeps running. */
export class WaitTimeoutError extends Error {
  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
  ) {
    super(`job ${jobId} did not finish within ${timeoutMs} ms (it keeps running; wait again or cancel it)`);
    this.name = "WaitTimeoutError";
  }
}

/** `jobs.run` found the job `failed` or `cancelled`; `code` is the job's `error.code`. */
export class JobFailedError extends Error {
  readonly code: string | null;
  constructor(readonly job: { id: string; status: string; error: { code: string; message: string } | null }) {
    super(`job ${job.id} ${job.status}${job.error ? `: ${job.error.code}: ${job.error.message}` : ""}`);
    this.name = "JobFailedError";
    this.code = job.error?.code ?? null;
  }
}

/** A webhook delivery whose signature or timestamp does not check out. */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}
