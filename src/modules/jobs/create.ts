// POST /jobs in one transaction: lock the key (serialises its concurrency check), load and
// check the input files, plan the job, enforce limits, reserve credits, insert the job, store
// the idempotent response, and wake a worker. The Idempotency-Key is claimed in the same
// transaction, so a failure or a crash leaves neither a job nor a record behind.
import { randomUUID } from "node:crypto";
import { db } from "../../db/client";
import type { AuthenticatedKey } from "../../auth/authenticate";
import { ApiError } from "../../domain/errors";
import { checkRequestShape, planJob, type InputFile, type JobRequest } from "../../domain/job-plan";
import { limits, pagesPerJob } from "../../domain/pricing";
import { reserveCredits } from "../../billing/credits";
import { countActiveJobs, insertJob } from "../../queue/jobs";
import { presentJob } from "../../presenters/job";
import { claimIdempotencyKey } from "./idempotency";

/** Seconds a client is told to wait when its key already has the maximum of active jobs. */
const concurrencyRetryAfterS = 5;

export interface Created {
  status: number;
  body: unknown;
  /** True when the answer is the stored one of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

export async function createJob(
  auth: AuthenticatedKey,
  req: JobRequest,
  idempotency: { key: string; hash: string } | null,
): Promise<Created> {
  const shape = checkRequestShape(req);
  const idempotencyKey = idempotency?.key ?? null;
  return db().begin(async (tx) => {
    await tx`SELECT id FROM api_keys WHERE id = ${auth.keyId} FOR UPDATE`;
    if (idempotency) {
      const claim = await claimIdempotencyKey(tx, auth.keyId, idempotency.key, idempotency.hash);
      if (claim.kind === "replay") return { status: claim.status, body: claim.body, replayed: true };
    }

    const rows =
      await tx`SELECT id, account_id, mode, kind, page_count, encrypted, status FROM files WHERE id IN ${tx(shape.fileIds)}`;
    const byId = new Map(rows.map((r) => [r.id as string, r]));
    const param = shape.operation.inputs === "many" ? "file_ids" : "file_id";
    const files: InputFile[] = shape.fileIds.map((id) => {
      const f = byId.get(id);
      if (!f || f.account_id !== auth.account.id || f.status === "deleted" || f.status === "expired") {
        throw new ApiError("not_found", `No such file: ${id}.`, param);
      }
      if (f.mode !== auth.mode)
        throw new ApiError(
          "mode_mismatch",
          `File ${id} belongs to ${f.mode === "live" ? "live" : "sandbox"} mode; use a key of that mode.`,
          param,
        );
      if (f.status !== "ready")
        throw new ApiError("file_not_ready", `File ${id} is not ready: complete its upload first.`, param);
      return { id, kind: f.kind, page_count: f.page_count, encrypted: f.encrypted };
    });
    const plan = planJob(shape, files);

    const cap = pagesPerJob(auth.mode, auth.account.pagesPerJob);
    if (plan.pagesEstimated > cap) {
      throw new ApiError(
        "page_limit_exceeded",
        `This job has ${plan.pagesEstimated} pages; the limit per job is ${cap} in ${auth.mode === "live" ? "live" : "sandbox"} mode.`,
        param,
      );
    }
    const active = await countActiveJobs(tx, auth.keyId);
    const maxActive = limits[auth.mode].concurrent_jobs;
    if (active >= maxActive) {
      throw new ApiError(
        "concurrency_limit",
        `This key already has ${active} queued or running jobs (the limit is ${maxActive}); retry when one finishes.`,
        null,
        {},
        { "retry-after": String(concurrencyRetryAfterS) },
      );
    }

    const id = randomUUID();
    const billed = auth.mode === "live" && plan.operation.creditsPerPage > 0;
    const credits = billed ? plan.pagesEstimated * plan.operation.creditsPerPage : 0;
    if (billed) {
      // Lock the account so concurrent jobs of all its keys see each other's reservations.
      await tx`SELECT id FROM accounts WHERE id = ${auth.account.id} FOR UPDATE`;
    }
    const job = await insertJob(tx, {
      id,
      accountId: auth.account.id,
      keyId: auth.keyId,
      mode: auth.mode,
      operation: plan.name,
      kind: plan.operation.kind,
      fileIds: plan.fileIds,
      options: plan.options,
      metadata: req.metadata ?? {},
      pagesEstimated: plan.pagesEstimated,
      creditsPerPage: plan.operation.creditsPerPage,
      creditsReserved: credits,
      billed,
    });
    if (billed) await reserveCredits(tx, auth.account, id, plan.operation.name, credits, plan.pagesEstimated);
    const body = presentJob(job);
    if (idempotencyKey) {
      await tx`UPDATE idempotency_records SET state = 'done', response_status = 202, response_body = ${tx.json(body as never)}
               WHERE key_id = ${auth.keyId} AND idempotency_key = ${idempotencyKey}`;
    }
    await tx`SELECT pg_notify('jobs', ${id})`;
    return { status: 202, body, replayed: false };
  }) as Promise<Created>;
}
