// The engine's error codes (crates/engine/src/error.rs, `ErrorCode::as_str`) and the job error
// code each becomes; typed over both lists, so a code added on either side fails to compile here.
import type { JobErrorCode } from "../domain/errors";

/** Every engine code, as crates/engine/src/error.rs `ErrorCode::ALL` lists them (test/unit/engine-errors.test.ts compares). */
export const engineErrorCodes = [
  "invalid_pdf",
  "encrypted_input",
  "invalid_password",
  "invalid_options",
  "cancelled",
  "page_limit",
  "io_error",
  "page_too_large",
  "ocr_unavailable",
  "invalid_image",
  "ocr_timeout",
  "pdfa_unsupported",
  "engine_error",
] as const;
export type EngineErrorCode = (typeof engineErrorCodes)[number];

/** The public job error code (GET /errors, `usedIn` "job") for each engine code. */
export const jobErrorCodeOf: Record<EngineErrorCode, JobErrorCode> = {
  invalid_pdf: "file_unreadable",
  encrypted_input: "file_encrypted",
  invalid_password: "invalid_options",
  invalid_options: "invalid_options",
  // A cancelled job is already final (cancelled) when its worker stops; the code is never shown.
  cancelled: "internal_error",
  page_limit: "page_limit_exceeded",
  io_error: "internal_error",
  page_too_large: "page_too_large",
  ocr_unavailable: "internal_error",
  invalid_image: "file_unreadable",
  // OCR marks a timed-out page in its result and goes on; a caller that cannot is out of time.
  ocr_timeout: "job_timeout",
  // PDF/A-2b asked of a document with what it forbids (the message lists it): no output can be made.
  pdfa_unsupported: "conversion_failed",
  engine_error: "file_unreadable",
};

export function isEngineErrorCode(code: string): code is EngineErrorCode {
  return (engineErrorCodes as readonly string[]).includes(code);
}

/** The code an addon rejection carries (`code`, or a `code: message` prefix); "engine_error" when none. */
export function engineErrorCode(e: unknown): string {
  const err = e as { code?: string; message?: string };
  if (err && typeof err.code === "string" && /^[a-z_]+$/.test(err.code)) return err.code;
  const m = /^([a-z_]+):/.exec(err?.message ?? "");
  return m ? m[1]! : "engine_error";
}

/** The job error code for an addon rejection; internal_error for a code the engine does not define. */
export function jobErrorCodeFor(e: unknown): JobErrorCode {
  const code = engineErrorCode(e);
  return isEngineErrorCode(code) ? jobErrorCodeOf[code] : "internal_error";
}
