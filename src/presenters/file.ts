// The public shape of a file. Fields beyond the spec's (id, object, page_count, status,
// expires_at) are this service's documented additions.
import type { FileRow } from "../db/rows";

export const fileColumns =
  "id, mode, filename, content_type, kind, size_bytes, page_count, encrypted, status, created_at, expires_at";

/** The columns `fileColumns` names. */
export type PresentedFileRow = Pick<
  FileRow,
  | "id"
  | "mode"
  | "filename"
  | "content_type"
  | "kind"
  | "size_bytes"
  | "page_count"
  | "encrypted"
  | "status"
  | "created_at"
  | "expires_at"
>;

export function presentFile(r: PresentedFileRow) {
  return {
    id: r.id,
    object: "file" as const,
    filename: r.filename,
    content_type: r.content_type,
    type: r.kind,
    size_bytes: Number(r.size_bytes),
    page_count: r.page_count,
    encrypted: r.encrypted,
    status: r.status as string,
    livemode: r.mode === "live",
    created_at: r.created_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
  };
}
