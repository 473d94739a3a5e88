// Files: multipart upload (streamed to disk, type sniffed from the bytes in the inspector),
// list, get, delete, and the presigned form, which needs an object store.
import { Type as T } from "@sinclair/typebox";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { route } from "../../http/route";
import { ApiError } from "../../http/errors";
import { check, readJson } from "../../http/validate";
import { assertOwned } from "../../http/ownership";
import { cursorRow, listPage } from "../../http/pagination";
import { db } from "../../db/client";
import { config } from "../../config";
import { receiveMultipartFile } from "../../storage/multipart";
import { deleteBlob, ensureDirFor, fileKey, scratchDir } from "../../storage/blobs";
import { inspect } from "../../engine/inspector-client";
import { declaredKind, typeMismatch } from "../../domain/file-types";
import { cleanFilename } from "./filename";
import { Deleted, FileIdParams, FileObject, ListQuery, PresignRequest, listOf } from "./models";
import { fileColumns, presentFile } from "./present";

/** The part's media type as stored: printable ASCII of at most 255 characters, else the generic type. */
function cleanContentType(raw: string): string {
  const type = raw.trim();
  return /^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(type) ? type : "application/octet-stream";
}

const notFoundStatuses = ["deleted", "expired"];

/** A live file of the caller's account and mode; deleted and expired files are gone (404). */
async function ownedFile(auth: Parameters<typeof assertOwned>[1], id: string): Promise<Record<string, any>> {
  const [row] = await db()`SELECT account_id, storage_key, ${db().unsafe(fileColumns)} FROM files WHERE id = ${id}`;
  const file = assertOwned(row as any, auth, "file", "file_id") as Record<string, any>;
  if (notFoundStatuses.includes(file.status)) throw new ApiError("not_found", "No such file (deleted or expired).", "file_id");
  return file;
}

async function uploadMultipart(request: Request, auth: { account: { id: string }; mode: string }) {
  const id = randomUUID();
  const tmp = join(scratchDir(), `upload-${id}`);
  const part = await receiveMultipartFile(request, tmp, config.maxUploadBytes, config.uploadTimeoutS * 1000);
  try {
    const filename = cleanFilename(part.filename);
    if (part.size === 0) throw new ApiError("unsupported_file_type", "The file is empty.", "file");
    let identified;
    try {
      identified = await inspect(tmp);
    } catch {
      throw new ApiError("file_unreadable", "The file could not be inspected; it may be damaged or hostile.", "file");
    }
    const mismatch = typeMismatch(declaredKind(part.contentType, filename), identified.kind);
    if (mismatch) throw new ApiError("unsupported_file_type", `Unsupported file: ${mismatch}. Accepted: PDF, DOCX, XLSX, CSV, JPEG, PNG, WebP.`, "file");
    if (identified.kind === "pdf" && identified.error && !identified.encrypted) {
      throw new ApiError("file_unreadable", "The PDF is damaged beyond repair and cannot be opened.", "file");
    }
    const contentType = cleanContentType(part.contentType);
    const key = fileKey(id);
    const dest = ensureDirFor(key);
    await rename(tmp, dest);
    // The blob is in place before its row; if the row cannot be written, the blob goes too (a
    // crash between the two is what the sweeper's orphan check is for).
    try {
      const [row] = await db()`
        INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, encrypted, status, storage_key, expires_at)
        VALUES (${id}, ${auth.account.id}, ${auth.mode}, ${filename}, ${contentType}, ${identified.kind}, ${part.size},
                ${identified.pageCount}, ${identified.encrypted}, 'ready', ${key}, now() + make_interval(secs => ${config.fileTtlS}))
        RETURNING ${db().unsafe(fileColumns)}`;
      return { status: 201, body: presentFile(row!) };
    } catch (e) {
      await rm(dest, { force: true });
      throw e;
    }
  } finally {
    await rm(tmp, { force: true });
  }
}

export const createFile = route({
  method: "POST",
  path: "/files",
  operationId: "createFile",
  summary: "Upload a file (multipart), or request a presigned upload URL (JSON)",
  description:
    "Multipart: exactly one part named `file`. The type is decided from the bytes and must match the declared type (the part's Content-Type, or the filename's extension when the Content-Type is generic). JSON: a presigned upload, which needs an object store (501 presigned_unavailable otherwise).",
  tag: "Files",
  scope: "documents:write",
  rawBody: [
    { contentType: "multipart/form-data", schema: T.Object({ file: T.String({ format: "binary" }) }), description: "Multipart upload with one `file` part." },
    { contentType: "application/json", schema: PresignRequest, description: "Or JSON to request a presigned PUT URL." },
  ],
  responses: { 201: { description: "The uploaded file, status ready.", schema: FileObject } },
  errors: ["unsupported_file_type", "file_too_large", "file_unreadable", "presigned_unavailable"],
  handler: async ({ request, auth }) => {
    const type = (request.headers.get("content-type") || "").toLowerCase();
    if (type.startsWith("multipart/form-data")) return uploadMultipart(request, auth);
    if (type.startsWith("application/json")) {
      check(PresignRequest, await readJson(request));
      throw new ApiError("presigned_unavailable", "Presigned uploads need an object store, and none is configured; upload with multipart/form-data instead.");
    }
    throw new ApiError("validation_error", "Send multipart/form-data with one `file` part, or JSON for a presigned upload.", null);
  },
});

export const completeFile = route({
  method: "POST",
  path: "/files/:file_id/complete",
  operationId: "completeFile",
  summary: "Finish a presigned upload",
  tag: "Files",
  scope: "documents:write",
  params: FileIdParams,
  responses: { 200: { description: "The file, now ready.", schema: FileObject } },
  errors: ["not_found", "mode_mismatch", "presigned_unavailable"],
  handler: async ({ auth, params }) => {
    const file = await ownedFile(auth, params.file_id);
    // Multipart uploads are ready at once; completing them is a harmless no-op.
    if (file.status === "ready") return { status: 200, body: presentFile(file) };
    throw new ApiError("presigned_unavailable", "Presigned uploads need an object store, and none is configured.");
  },
});

export const listFiles = route({
  method: "GET",
  path: "/files",
  operationId: "listFiles",
  summary: "List files, newest first",
  tag: "Files",
  scope: "documents:read",
  query: ListQuery,
  responses: { 200: { description: "A page of files.", schema: listOf(FileObject) } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, query }) => {
    const limit = query.limit ?? 20;
    const cursor = await cursorRow("files", query.starting_after, auth, "file");
    const rows = await db()`
      SELECT ${db().unsafe(fileColumns)} FROM files
      WHERE account_id = ${auth.account.id} AND mode = ${auth.mode} AND status IN ('ready', 'pending_upload')
        ${cursor ? db()`AND (created_at, id) < (${cursor.created_at}, ${cursor.id})` : db()``}
      ORDER BY created_at DESC, id DESC LIMIT ${limit + 1}`;
    return { status: 200, body: listPage(rows, limit, presentFile) };
  },
});

export const getFile = route({
  method: "GET",
  path: "/files/:file_id",
  operationId: "getFile",
  summary: "Get a file",
  tag: "Files",
  scope: "documents:read",
  params: FileIdParams,
  responses: { 200: { description: "The file.", schema: FileObject } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => {
    return { status: 200, body: presentFile(await ownedFile(auth, params.file_id)) };
  },
});

export const deleteFile = route({
  method: "DELETE",
  path: "/files/:file_id",
  operationId: "deleteFile",
  summary: "Delete a file before it expires",
  tag: "Files",
  scope: "documents:write",
  params: FileIdParams,
  responses: { 200: { description: "Deleted.", schema: Deleted } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => {
    const file = await ownedFile(auth, params.file_id);
    await db()`UPDATE files SET status = 'deleted', deleted_at = now() WHERE id = ${file.id}`;
    deleteBlob(file.storage_key);
    return { status: 200, body: { id: file.id, object: "file", deleted: true } };
  },
});

export const fileRoutes = [createFile, listFiles, getFile, completeFile, deleteFile];
