// Jobs: create (idempotent), list, get, cancel, and the result in its three formats.
import { Type as T } from "@sinclair/typebox";
import { route } from "../common/route";
import { ApiError } from "../../domain/errors";
import { assertOwned } from "../common/ownership";
import { cursorRow, listPage } from "../common/pagination";
import { findJob, listJobRows, type JobRow } from "../../queue/jobs";
import { blobStore } from "../../storage/blobs";
import { check } from "../../domain/schema-check";
import { CreateJobRequest, JobIdParams, JobObject, ListJobsQuery, ResultQuery } from "./models";
import { listOf } from "../files/models";
import { presentJob } from "../../presenters/job";
import { createJob } from "./create";
import { requestHash } from "./idempotency";
import { cancelJob } from "../../queue/finish";
import type { JobRequest } from "../../domain/job-plan";

const IdempotencyKeyHeader = T.String({ minLength: 1, maxLength: 255 });

export const createJobRoute = route({
  method: "POST",
  path: "/jobs",
  operationId: "createJob",
  summary: "Create a job",
  description:
    "Validates the operation, inputs and options, reserves credits (live, billed operations) and queues the job. With an Idempotency-Key, a retry with the same body replays the first answer.",
  tag: "Jobs",
  scope: "jobs:write",
  body: CreateJobRequest,
  headers: [
    {
      name: "Idempotency-Key",
      description: "Up to 255 characters; scoped to the API key; kept 24 hours.",
      schema: IdempotencyKeyHeader,
    },
  ],
  responses: { 202: { description: "The job, queued.", schema: JobObject, headers: ["Idempotent-Replayed"] } },
  errors: [
    "operation_unsupported",
    "invalid_options",
    "unsupported_file_type",
    "not_found",
    "mode_mismatch",
    "file_not_ready",
    "page_limit_exceeded",
    "insufficient_credits",
    "spending_cap_reached",
    "concurrency_limit",
    "idempotency_key_reused",
    "idempotency_in_progress",
    "queue_unavailable",
  ],
  handler: async ({ auth, body, request }) => {
    const idemKey = request.headers.get("idempotency-key");
    if (idemKey !== null) check(IdempotencyKeyHeader, idemKey, "Idempotency-Key");
    const out = await createJob(
      auth,
      body as JobRequest,
      idemKey === null ? null : { key: idemKey, hash: requestHash(body) },
    );
    return {
      status: out.status,
      body: out.body,
      headers: out.replayed ? { "idempotent-replayed": "true" } : ({} as Record<string, string>),
    };
  },
});

export const listJobs = route({
  method: "GET",
  path: "/jobs",
  operationId: "listJobs",
  summary: "List jobs, newest first",
  tag: "Jobs",
  scope: "jobs:read",
  query: ListJobsQuery,
  responses: { 200: { description: "A page of jobs.", schema: listOf(JobObject) } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, query }) => {
    const limit = query.limit ?? 20;
    const cursor = await cursorRow("jobs", query.starting_after, auth, "job");
    const rows = await listJobRows({
      accountId: auth.account.id,
      mode: auth.mode,
      status: query.status,
      cursor,
      limit,
    });
    return { status: 200, body: listPage(rows, limit, presentJob) };
  },
});

async function ownedJob(auth: Parameters<typeof assertOwned>[1], id: string): Promise<JobRow> {
  return assertOwned(await findJob(id), auth, "job", "job_id");
}

export const getJob = route({
  method: "GET",
  path: "/jobs/:job_id",
  operationId: "getJob",
  summary: "Get a job",
  tag: "Jobs",
  scope: "jobs:read",
  params: JobIdParams,
  responses: { 200: { description: "The job.", schema: JobObject } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => ({ status: 200, body: presentJob(await ownedJob(auth, params.job_id)) }),
});

export const cancelJobRoute = route({
  method: "POST",
  path: "/jobs/:job_id/cancel",
  operationId: "cancelJob",
  summary: "Cancel a queued or running job",
  description:
    "A queued job is cancelled at once; a running job is marked cancelled at once and its worker stops at the next page checkpoint. Cancelling a finished job answers 200 with the job unchanged.",
  tag: "Jobs",
  scope: "jobs:write",
  params: JobIdParams,
  responses: { 200: { description: "The job after the call.", schema: JobObject } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => {
    await ownedJob(auth, params.job_id);
    const job = await cancelJob(params.job_id);
    return { status: 200, body: presentJob(job!) };
  },
});

/** Lifetime of a format=url link: short, so a leaked link stops working soon (not in the spec). */
export const RESULT_URL_TTL_S = 15 * 60;

export const getJobResult = route({
  method: "GET",
  path: "/jobs/:job_id/result",
  operationId: "getJobResult",
  summary: "Download a job's result",
  description:
    "format=download (default) streams the result bytes; format=json (or Accept: application/json) returns the result as JSON (OCR blocks, or the file's metadata); format=url answers `{object, url, expires_at, filename}` with a presigned GET URL of the result, valid 15 minutes (never past the result's own expiry); it needs an object store (501 presigned_unavailable without one).",
  tag: "Jobs",
  scope: "jobs:read",
  params: JobIdParams,
  query: ResultQuery,
  responses: {
    200: {
      description: "The result bytes (application/octet-stream), or JSON with format=json.",
      schema: T.String({ format: "binary" }),
      contentType: "application/octet-stream",
      headers: ["X-Service-Sandbox"],
    },
  },
  errors: [
    "not_found",
    "mode_mismatch",
    "job_not_finished",
    "no_downloadable_result",
    "result_expired",
    "presigned_unavailable",
    "store_unavailable",
  ],
  handler: async ({ auth, params, query, request }) => {
    const job = await ownedJob(auth, params.job_id);
    const accept = (request.headers.get("accept") || "").toLowerCase();
    const format =
      query.format ?? (accept.includes("application/json") && !accept.includes("octet-stream") ? "json" : "download");
    if (job.status !== "succeeded")
      throw new ApiError("job_not_finished", `The job is ${job.status}; results exist only once it has succeeded.`);
    if (job.result_deleted_at || (job.result_expires_at && job.result_expires_at <= new Date())) {
      throw new ApiError("result_expired", "The result was removed after its time-to-live; run the job again.");
    }
    const result = job.result!;
    const sandbox: Record<string, string> = job.mode === "test" ? { "x-service-sandbox": "true" } : {};
    if (format === "url") {
      if (result.type !== "file" || !result.storage_key)
        throw new ApiError("no_downloadable_result", "This job's result is JSON only; request it with format=json.");
      const ttlS = Math.max(
        1,
        Math.min(
          RESULT_URL_TTL_S,
          job.result_expires_at ? Math.floor((job.result_expires_at.getTime() - Date.now()) / 1000) : RESULT_URL_TTL_S,
        ),
      );
      const store = blobStore();
      if (store.kind === "s3" && (await store.size(result.storage_key)) === null)
        throw new ApiError("result_expired", "The result is no longer stored; run the job again.");
      const url = store.presign(result.storage_key, {
        method: "GET",
        expiresInS: ttlS,
        downloadName: result.filename ?? "result",
      });
      return {
        status: 200,
        body: {
          object: "job_result_url",
          job_id: job.id,
          url,
          expires_at: new Date(Date.now() + ttlS * 1000).toISOString(),
          filename: result.filename,
          content_type: result.content_type,
          bytes: result.bytes,
        },
        headers: sandbox,
      };
    }
    if (format === "json") {
      const body =
        result.type === "json"
          ? result.json
          : {
              object: "job_result",
              job_id: job.id,
              type: "file",
              filename: result.filename,
              content_type: result.content_type,
              bytes: result.bytes,
              pages_processed: job.pages_processed,
              download_url: presentJob(job).result!.download_url,
            };
      return { status: 200, body, headers: sandbox };
    }
    if (result.type !== "file" || !result.storage_key)
      throw new ApiError("no_downloadable_result", "This job's result is JSON only; request it with format=json.");
    const body = await blobStore().get(result.storage_key);
    if (!body) throw new ApiError("result_expired", "The result is no longer stored; run the job again.");
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "application/octet-stream",
        "content-disposition": `attachment; filename="${(result.filename ?? "result").replace(/[^\w.-]/g, "_")}"`,
        "x-result-content-type": result.content_type ?? "application/octet-stream",
        ...sandbox,
      },
    });
  },
});

export const jobRoutes = [createJobRoute, listJobs, getJob, cancelJobRoute, getJobResult];
