// The public shape of a file. Fields beyond the spec's (id, object, page_count, status,
// expires_at) are this service's documented additions.
export const fileColumns = "id, mode, filename, content_type, kind, size_bytes, page_count, encrypted, status, created_at, expires_at";

export function presentFile(r: Record<string, any>) {
  return {
    id: r.id as string,
    object: "file" as const,
    filename: r.filename as string,
    content_type: r.content_type as string,
    type: r.kind as string,
    size_bytes: Number(r.size_bytes),
    page_count: r.page_count as number | null,
    encrypted: r.encrypted as boolean,
    status: r.status as string,
    livemode: r.mode === "live",
    created_at: (r.created_at as Date).toISOString(),
    expires_at: (r.expires_at as Date).toISOString(),
  };
}
