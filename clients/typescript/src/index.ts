// The docproc client: a typed openapi-fetch client over the generated schema, and a small layer
// for what every integration needs (uploads, idempotent retried job creation, waiting, results,
// cancellation, webhook verification). Errors are thrown as ApiError.
import createFetchClient, { type Client as FetchClient } from "openapi-fetch";
import type { paths } from "./schema";
import { ApiError, JobFailedError, WaitTimeoutError } from "./errors";
import { defaultRetryPolicy, retryingFetch, type FetchLike, type RetryPolicy } from "./retry";
import { verify, type VerifyOptions } from "./webhooks";
import type { File, Job, JobRequest, OcrResult, ResultUrl, WebhookEvent } from "./types";

export {
  ApiError,
  ConnectionError,
  JobFailedError,
  WaitTimeoutError,
  WebhookVerificationError,
  type ErrorBody,
} from "./errors";
export type {
  File,
  Job,
  JobRequest,
  JobStatus,
  ResultUrl,
  OcrResult,
  OcrPage,
  OcrBlock,
  OcrLine,
  OcrWord,
  WebhookEvent,
} from "./types";
export type { paths, operations } from "./schema";
export { verify as verifyWebhook, type VerifyOptions } from "./webhooks";
export type { FetchLike, RetryPolicy } from "./retry";

export interface ClientOptions {
  /** `svk_live_...` or `svk_test_...`. */
  apiKey: string;
  /** Ends in /api/v1, e.g. http://127.0.0.1:8080/api/v1. */
  baseUrl: string;
  /** Retries after the first attempt on network errors, 429, 503 (default 2, as stripe-node). */
  maxNetworkRetries?: number;
  /** Backoff tuning; see RetryPolicy. */
  retry?: Partial<Omit<RetryPolicy, "maxNetworkRetries">>;
  /** The fetch to send requests with (default: the global fetch). */
  fetch?: FetchLike;
}

export interface WaitOptions {
  /** Give up after this many milliseconds (default 10 minutes, the service's job timeout). */
  timeout?: number;
  /** Called with the job whenever its status or progress changed. */
  onProgress?: (job: Job) => void;
  /** First poll interval; it grows by half each poll up to 5 s (default 500 ms). */
  pollInterval?: number;
  signal?: AbortSignal;
}

const finalStatuses = new Set(["succeeded", "failed", "cancelled"]);
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/** Unwraps an openapi-fetch answer: the data, or the ApiError built from the response. */
async function ok<T>(r: { data?: T; error?: unknown; response: Response }): Promise<T> {
  if (r.response.ok) return r.data as T;
  throw new ApiError(
    r.response.status,
    (r.error as { error: never })?.error ?? {
      type: "api_error",
      code: `http_${r.response.status}`,
      message: r.response.statusText,
    },
    r.response.headers,
  );
}

export class Client {
  /** The typed low-level client for every endpoint of the OpenAPI document (retries included). */
  readonly api: FetchClient<paths>;
  readonly files: Files;
  readonly jobs: Jobs;
  readonly webhooks: Webhooks;

  constructor(opts: ClientOptions) {
    if (!opts.apiKey) throw new TypeError("apiKey is required");
    if (!opts.baseUrl) throw new TypeError("baseUrl is required (it ends in /api/v1)");
    const policy: RetryPolicy = {
      ...defaultRetryPolicy,
      ...opts.retry,
      maxNetworkRetries: opts.maxNetworkRetries ?? defaultRetryPolicy.maxNetworkRetries,
    };
    const send = retryingFetch(opts.fetch ?? ((r: Request) => globalThis.fetch(r)), policy);
    this.api = createFetchClient<paths>({
      baseUrl: opts.baseUrl.replace(/\/$/, ""),
      headers: { authorization: `Bearer ${opts.apiKey}` },
      fetch: (input: Request) => send(input),
    });
    this.files = new Files(this.api, send);
    this.jobs = new Jobs(this.api);
    this.webhooks = new Webhooks();
  }
}

/** Reads a path (Bun, Node, Deno) or takes a Blob as is; the name is the path's base name or the File's name. */
async function blobOf(pathOrBlob: string | Blob, filename?: string): Promise<{ blob: Blob; name: string }> {
  if (typeof pathOrBlob === "string") {
    const { readFile } = await import("node:fs/promises");
    const { basename } = await import("node:path");
    return { blob: new Blob([await readFile(pathOrBlob)]), name: filename ?? basename(pathOrBlob) };
  }
  return { blob: pathOrBlob, name: filename ?? ((pathOrBlob as globalThis.File).name || "upload") };
}

export class Files {
  constructor(
    private readonly api: FetchClient<paths>,
    /** The retrying fetch without the API's headers: the presigned PUT goes to the object store. */
    private readonly send: FetchLike,
  ) {}

  /**
   * Uploads a file (multipart). A string is a path on disk (Bun, Node, Deno); a Blob is sent as
   * is (a `File` keeps its name). The service decides the type from the bytes.
   */
  async upload(pathOrBlob: string | Blob, filename?: string): Promise<File> {
    const { blob, name } = await blobOf(pathOrBlob, filename);
    const form = new FormData();
    form.append("file", blob, name);
    return ok(await this.api.POST("/files", { body: form as never, bodySerializer: (b: unknown) => b as FormData }));
  }

  /**
   * Uploads through the object store (the service needs S3; without it this throws ApiError 501
   * `presigned_unavailable`): POST /files with `{filename, content_type, size_bytes}`, PUT the
   * bytes to the returned `upload.url` with exactly `upload.headers`, then POST
   * /files/{id}/complete, which checks the object and returns the ready file. Every step is
   * retried like the other calls (network errors, 429, 503; Retry-After honoured); the PUT and
   * complete are idempotent. `contentType` defaults to the Blob's type, else application/pdf
   * for a `.pdf` name, else application/octet-stream (the service then goes by the extension).
   */
  async uploadPresigned(
    pathOrBlob: string | Blob,
    opts: { filename?: string; contentType?: string } = {},
  ): Promise<File> {
    const { blob, name } = await blobOf(pathOrBlob, opts.filename);
    const contentType =
      opts.contentType || blob.type || (/\.pdf$/i.test(name) ? "application/pdf" : "application/octet-stream");
    const created = await ok(
      await this.api.POST("/files", { body: { filename: name, content_type: contentType, size_bytes: blob.size } }),
    );
    if (!("upload" in created)) throw new TypeError("POST /files answered without `upload` (not a presigned answer)");
    const put = await this.send(
      new Request(created.upload.url, { method: created.upload.method, headers: created.upload.headers, body: blob }),
    );
    if (!put.ok) throw await ApiError.from(put);
    await put.body?.cancel();
    return ok(
      await this.api.POST("/files/{file_id}/complete", { params: { path: { file_id: created.id } } }),
    ) as Promise<File>;
  }

  get(id: string): Promise<File> {
    return this.api.GET("/files/{file_id}", { params: { path: { file_id: id } } }).then(ok);
  }

  async delete(id: string): Promise<void> {
    await ok(await this.api.DELETE("/files/{file_id}", { params: { path: { file_id: id } } }));
  }
}

export class Jobs {
  constructor(private readonly api: FetchClient<paths>) {}

  /**
   * Creates a job. Every attempt of one call sends the same Idempotency-Key (generated when none
   * is given), so a retry after a lost response or a 429/503 returns the first job, never a second.
   */
  create(request: JobRequest, opts: { idempotencyKey?: string } = {}): Promise<Job> {
    const key = opts.idempotencyKey ?? `docproc-ts-${crypto.randomUUID()}`;
    return this.api
      .POST("/jobs", { body: request, params: { header: { "Idempotency-Key": key } } })
      .then(ok) as Promise<Job>;
  }

  get(id: string): Promise<Job> {
    return this.api.GET("/jobs/{job_id}", { params: { path: { job_id: id } } }).then(ok);
  }

  /** Cancels a job; a finished job is returned unchanged. */
  cancel(id: string): Promise<Job> {
    return this.api.POST("/jobs/{job_id}/cancel", { params: { path: { job_id: id } } }).then(ok) as Promise<Job>;
  }

  /** Polls until the job is succeeded, failed or cancelled, and returns it (it does not throw on failed). */
  async wait(id: string, opts: WaitOptions = {}): Promise<Job> {
    const timeout = opts.timeout ?? 600_000;
    const deadline = Date.now() + timeout;
    let interval = opts.pollInterval ?? 500;
    let seen = "";
    for (;;) {
      const job = await this.get(id);
      const state = `${job.status}:${job.progress.pages_done}/${job.progress.pages_total}`;
      if (state !== seen) {
        seen = state;
        opts.onProgress?.(job);
      }
      if (finalStatuses.has(job.status)) return job;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(id, timeout);
      await sleep(Math.min(interval, left), opts.signal);
      interval = Math.min(interval * 1.5, 5000);
    }
  }

  /** The result file's bytes (`format=download`), or with `{ format: "json" }` the OCR blocks. */
  result(id: string): Promise<Uint8Array>;
  result(id: string, opts: { format: "json" }): Promise<OcrResult>;
  result(id: string, opts: { format: "download" }): Promise<Uint8Array>;
  async result(id: string, opts: { format?: "download" | "json" } = {}): Promise<Uint8Array | OcrResult> {
    const format = opts.format ?? "download";
    const r = await this.api.GET("/jobs/{job_id}/result", {
      params: { path: { job_id: id }, query: { format } },
      parseAs: format === "json" ? "json" : "arrayBuffer",
    });
    const data = await ok(r as { data?: unknown; error?: unknown; response: Response });
    return format === "json" ? (data as OcrResult) : new Uint8Array(data as ArrayBuffer);
  }

  /**
   * A presigned GET URL of the result (`format=url`; the service needs S3, else ApiError 501
   * `presigned_unavailable`): `{object: "job_result_url", job_id, url, expires_at, filename,
   * content_type, bytes}`. The URL is valid 15 minutes (never past the result's expiry) and
   * needs no API key.
   */
  resultUrl(id: string): Promise<ResultUrl> {
    return this.api
      .GET("/jobs/{job_id}/result", { params: { path: { job_id: id }, query: { format: "url" } }, parseAs: "json" })
      .then((r) => ok(r as { data?: unknown; error?: unknown; response: Response })) as Promise<ResultUrl>;
  }

  /**
   * Creates the job, waits for it and fetches its result: bytes for a file result, the parsed
   * OCR blocks for a JSON one. Throws JobFailedError when the job failed or was cancelled.
   */
  async run(
    request: JobRequest,
    opts: WaitOptions & { idempotencyKey?: string } = {},
  ): Promise<{ job: Job; result: Uint8Array | OcrResult }> {
    const created = await this.create(request, opts);
    const job = await this.wait(created.id, opts);
    if (job.status !== "succeeded") throw new JobFailedError(job);
    const result =
      job.result?.type === "json" ? await this.result(job.id, { format: "json" }) : await this.result(job.id);
    return { job, result };
  }
}

export class Webhooks {
  /**
   * Verifies a delivery's `Service-Signature` over the raw body (constant-time compare, timestamp
   * within `toleranceS`, default 300) and returns the event; throws WebhookVerificationError.
   */
  verify(
    rawBody: string | Uint8Array,
    signatureHeader: string | null | undefined,
    secret: string,
    opts: VerifyOptions = {},
  ): WebhookEvent {
    return verify(rawBody, signatureHeader, secret, opts);
  }
}
