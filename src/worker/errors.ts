// An addon rejection -> the failed job's public error: the code from src/engine/errors.ts's map,
// and a message for the user (the engine's own text, or a fixed one for our faults).
import { jobErrorCodeFor } from "../engine/errors";

export function jobErrorFrom(e: unknown): { code: string; message: string } {
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
  return { code, message };
}
