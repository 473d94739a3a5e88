// Any rejection of a job's run -> the failed job's public error, one `JobError`: a JobError as
// thrown (executors, the converters), the object store's outage, an addon rejection (the code
// from src/engine/errors.ts's map, and a message for the user: the engine's own text, or a
// fixed one for our faults), and anything else as internal_error.
import { ApiError, JobError } from "../domain/errors";
import { jobErrorCodeFor } from "../engine/errors";

/** An addon rejection as the job's error. */
export function jobErrorFrom(e: unknown): JobError {
  const code = jobErrorCodeFor(e);
  const raw = String((e as Error)?.message ?? e).replace(/^[a-z_]+:\s*/, "");
  const message =
    code === "file_encrypted" && /workbook/.test(raw)
      ? `${raw[0]!.toUpperCase()}${raw.slice(1)}.`
      : code === "file_encrypted"
        ? `The input is password-protected; run the unlock operation with its password first. (${raw})`
        : code === "internal_error"
          ? "The job failed on our side."
          : raw;
  return new JobError(code, message);
}

/** Whatever a job's run threw, as the error the failed job carries. */
export function toJobError(e: unknown): JobError {
  if (e instanceof JobError) return e;
  if (e instanceof ApiError && e.code === "store_unavailable") {
    return new JobError(
      e.code,
      "The object store was unreachable while the job read its input or stored its result; run the job again.",
    );
  }
  return jobErrorFrom(e);
}
