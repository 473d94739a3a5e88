// The public shape of a job. Spec fields: id, object, operation, status, metadata, credits,
// result, error, sandbox; the rest (kind, progress, timestamps, inputs) are documented additions.
import { config } from "../config";
import type { JobRow } from "../db/rows";
import { secretOptionNames } from "../domain/operations";

/** Passwords given to protect/unlock are never echoed (responses, webhooks, idempotent replays). */
function publicOptions(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) out[k] = secretOptionNames.includes(k) ? "[redacted]" : v;
  return out;
}

export function presentJob(r: JobRow) {
  const file = r.result?.type === "file" ? r.result : null;
  const status = r.status as string;
  const total = r.progress_total as number;
  const done = status === "succeeded" ? total || (r.pages_processed ?? 0) : (r.progress_done as number);
  return {
    id: r.id as string,
    object: "job" as const,
    operation: r.operation as string,
    kind: r.kind as string,
    status,
    file_id: (r.file_ids as string[]).length === 1 && r.operation !== "merge" ? (r.file_ids as string[])[0]! : null,
    file_ids: r.operation === "merge" ? (r.file_ids as string[]) : null,
    options: publicOptions(r.options as Record<string, unknown>),
    metadata: r.metadata as Record<string, string>,
    credits: {
      billed: r.billed as boolean,
      pages_estimated: r.pages_estimated as number,
      credits_per_page: r.mode === "live" ? (r.credits_per_page as number) : 0,
      credits_reserved: r.credits_reserved as number,
    },
    progress: {
      pages_done: done,
      pages_total: total || (r.pages_estimated as number),
      percent: total ? Math.min(100, Math.round((done / total) * 100)) : status === "succeeded" ? 100 : 0,
    },
    result:
      status === "succeeded"
        ? {
            download_url: `${config.baseUrl}/jobs/${r.id}/result`,
            pages_processed: r.pages_processed as number,
            type: r.result?.type ?? "file",
            filename: file?.filename ?? null,
            content_type: file?.content_type ?? null,
            bytes: file?.bytes ?? null,
            expires_at: r.result_expires_at ? (r.result_expires_at as Date).toISOString() : null,
            ...(file?.note ? { note: file.note } : {}),
          }
        : null,
    error: status === "failed" && r.error ? { code: r.error.code as string, message: r.error.message as string } : null,
    sandbox: r.mode === "test",
    livemode: r.mode === "live",
    attempts: r.attempts as number,
    created_at: (r.created_at as Date).toISOString(),
    started_at: r.started_at ? (r.started_at as Date).toISOString() : null,
    finished_at: r.finished_at ? (r.finished_at as Date).toISOString() : null,
  };
}
