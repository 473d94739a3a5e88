// Engine error codes (crates/engine/src/error.rs) -> the public job error codes of /errors.
import { engineErrorCode } from "../engine/native";

const map: Record<string, string> = {
  invalid_pdf: "file_unreadable",
  encrypted_input: "file_encrypted",
  invalid_password: "invalid_options",
  invalid_options: "invalid_options",
  page_limit: "page_limit_exceeded",
  page_too_large: "page_too_large",
  engine_error: "file_unreadable",
  io_error: "internal_error",
  invalid_image: "file_unreadable",
  ocr_unavailable: "internal_error",
};

export function jobErrorFrom(e: unknown): { code: string; message: string } {
  const engineCode = engineErrorCode(e);
  const code = map[engineCode] ?? "internal_error";
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
