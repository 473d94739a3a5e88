// The filename of an upload, checked and made safe once, when it arrives: it is stored, listed
// and reused for result names and Content-Disposition, so it must be storable and printable.
import { ApiError } from "../../domain/errors";

export const filenameMaxChars = 255;
const extensionMaxChars = 16;

/**
 * Refuses a missing, empty or unstorable name (422 validation_error, param `file`); otherwise
 * keeps only the last path segment, drops control characters and quotes, and shortens it to
 * 255 characters keeping the extension.
 */
export function cleanFilename(raw: string | null): string {
  if (raw === null)
    throw new ApiError(
      "validation_error",
      'The `file` part has no filename; send it as a file (Content-Disposition: form-data; name="file"; filename="...").',
      "file",
    );
  if (raw.includes("\u0000"))
    throw new ApiError("validation_error", "The filename contains the NUL character (U+0000).", "file");
  if (!raw.isWellFormed() || raw.includes("\uFFFD"))
    throw new ApiError("validation_error", "The filename is not valid UTF-8.", "file");
  // Browsers on Windows send full paths; only the last segment is the name.
  let name = raw.split(/[\\/]/).pop()!;
  // Control characters (C0, DEL, C1), quotes and bidi overrides make headers and listings lie.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this removes
  name = name.replace(/[\u0000-\u001f\u007f-\u009f"\u202a-\u202e\u2066-\u2069]/g, "").trim();
  if (!name || name === "." || name === "..")
    throw new ApiError(
      "validation_error",
      "The filename is empty once path and control characters are removed.",
      "file",
    );
  const chars = [...name]; // code points, so a surrogate pair is never cut in half
  if (chars.length <= filenameMaxChars) return name;
  const dot = name.lastIndexOf(".");
  const ext = dot > 0 ? [...name.slice(dot)] : [];
  const keep = ext.length > 1 && ext.length <= extensionMaxChars ? ext : [];
  return chars.slice(0, filenameMaxChars - keep.length).join("") + keep.join("");
}
