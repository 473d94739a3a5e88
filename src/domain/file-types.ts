// Which document kinds the service accepts, and how a declared type (multipart Content-Type,
// else the filename's extension) is matched against the kind sniffed from the bytes.
import type { InputKind } from "./operations";

export const acceptedKinds: InputKind[] = ["pdf", "docx", "xlsx", "csv", "jpeg", "png", "webp"];

const byMime: Record<string, InputKind> = {
  "application/pdf": "pdf",
  "application/x-pdf": "pdf",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "text/csv": "csv",
  "application/csv": "csv",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/png": "png",
  "image/webp": "webp",
};

const byExtension: Record<string, InputKind> = {
  pdf: "pdf",
  docx: "docx",
  xlsx: "xlsx",
  csv: "csv",
  jpg: "jpeg",
  jpeg: "jpeg",
  png: "png",
  webp: "webp",
};

/** Content types that say nothing specific; the extension decides then. */
const generic = new Set([
  "",
  "application/octet-stream",
  "binary/octet-stream",
  "application/zip",
  "text/plain",
  "application/x-zip-compressed",
]);

export const contentTypeOf: Record<InputKind, string> = {
  pdf: "application/pdf",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  csv: "text/csv",
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
};

export type Declared = { kind: InputKind } | { kind: null; reason: string } | { kind: "any" };

/** The declared kind: a specific Content-Type wins; a generic one defers to the extension. */
export function declaredKind(contentType: string, filename: string): Declared {
  const mime = contentType.split(";")[0]!.trim().toLowerCase();
  if (!generic.has(mime)) {
    const k = byMime[mime];
    return k ? { kind: k } : { kind: null, reason: `Content-Type ${mime} is not an accepted type` };
  }
  const ext = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  if (ext) {
    const k = byExtension[ext];
    return k ? { kind: k } : { kind: null, reason: `the .${ext} extension is not an accepted type` };
  }
  return { kind: "any" };
}

/** Null when acceptable, else the reason for 415 unsupported_file_type. */
export function typeMismatch(declared: Declared, sniffed: string): string | null {
  if (!(acceptedKinds as string[]).includes(sniffed))
    return "the bytes are not a PDF, DOCX, XLSX, CSV, JPEG, PNG or WebP file";
  if (declared.kind === null) return declared.reason;
  if (declared.kind === "any") return null;
  if (declared.kind !== sniffed) return `the file is declared as ${declared.kind} but its bytes are ${sniffed}`;
  return null;
}
