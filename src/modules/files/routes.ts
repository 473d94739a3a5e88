// Files: multipart upload (streamed to scratch, type sniffed from the bytes in the inspector,
// then put in the blob store), list, get, delete, and presigned upload + complete (S3 only).
import { Type as T, type Static } from "@sinclair/typebox";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { route } from "../common/route";
import { ApiError } from "../../domain/errors";
import { check } from "../../domain/schema-check";
import { readJson } from "../common/read-request";
import { assertOwned } from "../common/ownership";
import { cursorRow, listPage } from "../common/pagination";
import { db } from "../../db/client";
import { config } from "../../config";
import { receiveMultipartFile } from "../../storage/multipart";
import { blobStore, fileKey, scratchDir } from "../../storage/blobs";
import { inspect } from "../../engine/inspector-client";
import { declaredKind, typeMismatch } from "../../domain/file-types";
import { cleanFilename } from "./filename";
import { Deleted, FileIdParams, FileObject, ListQuery, PresignRequest, PresignedUpload, listOf } from "./models";
import { fileColumns, type PresentedFileRow, presentFile } from "../../presenters/file";
import type { FileRow } from "../../db/rows";

/** The part's media type as stored: printable ASCII of at most 255 characters, else the generic type. */
function cleanContentType(raw: string): string {
  const type = raw.trim();
  return /^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(type) ? type : "application/octet-stream";
}

const notFoundStatuses = ["deleted", "expired"];

type OwnedFile = PresentedFileRow & Pick<FileRow, "account_id" | "storage_key">;

/** A live file of the caller's account and mode; deleted and expired files are gone (404). */
async function ownedFile(auth: Parameters<typeof assertOwned>[1], id: string): Promise<OwnedFile> {
  const [row] = await db()<
    OwnedFile[]
  >`SELECT account_id, storage_key, ${db().unsafe(fileColumns)} FROM files WHERE id = ${id}`;
  const file = assertOwned(row, auth, "file", "file_id");
  if (notFoundStatuses.includes(file.status))
    throw new ApiError("not_found", "No such file (deleted or expired).", "file_id");
  return file;
}

/** Identifies a local copy of an upload in the inspector (native code never runs in the API
 * process) and checks it against the declared type; throws the upload's error otherwise. */
async function identify(path: string, size: number, contentType: string, filename: string, param: string) {
  if (size === 0) throw new ApiError("unsupported_file_type", "The file is empty.", param);
  let identified;
  try {
    identified = await inspect(path);
  } catch {
    throw new ApiError("file_unreadable", "The file could not be inspected; it may be damaged or hostile.", param);
  }
  const mismatch = typeMismatch(declaredKind(contentType, filename), identified.kind);
  if (mismatch)
    throw new ApiError(
      "unsupported_file_type",
      `Unsupported file: ${mismatch}. Accepted: PDF, DOCX, XLSX, CSV, JPEG, PNG, WebP.`,
      param,
    );
  if (identified.kind === "pdf" && identified.error && !identified.encrypted) {
    throw new ApiError("file_unreadable", "The PDF is damaged beyond repair and cannot be opened.", param);
  }
  return identified;
}

/** How long a presigned PUT URL is valid (never past the file's own expiry; not in the spec). */
export const UPLOAD_URL_TTL_S = 60 * 60;

async function presignUpload(body: unknown, auth: { account: { id: string }; mode: string }) {
  const req = check<Static<typeof PresignRequest>>(PresignRequest, body);
  const store = blobStore();
  if (store.kind !== "s3")
    throw new ApiError(
      "presigned_unavailable",
      "Presigned uploads need an object store, and none is configured; upload with multipart/form-data instead.",
    );
  if (req.size_bytes > config.maxUploadBytes)
    throw new ApiError(
      "file_too_large",
      `The upload is larger than the maximum of ${config.maxUploadBytes} bytes.`,
      "size_bytes",
    );
  const declared = declaredKind(req.content_type, req.filename);
  if (declared.kind === null)
    throw new ApiError(
      "unsupported_file_type",
      `Unsupported file: ${declared.reason}. Accepted: PDF, DOCX, XLSX, CSV, JPEG, PNG, WebP.`,
      "content_type",
    );
  const id = randomUUID();
  const key = fileKey(id);
  const ttlS = Math.min(UPLOAD_URL_TTL_S, config.fileTtlS);
  const url = store.presign(key, { method: "PUT", expiresInS: ttlS });
  // `kind` holds the declared kind until complete replaces it with the sniffed one.
  const [row] = await db()<PresentedFileRow[]>`
    INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, encrypted, status, storage_key, expires_at)
    VALUES (${id}, ${auth.account.id}, ${auth.mode}, ${req.filename}, ${req.content_type}, ${declared.kind === "any" ? "unknown" : declared.kind}, ${req.size_bytes},
            NULL, false, 'pending_upload', ${key}, now() + make_interval(secs => ${config.fileTtlS}))
    RETURNING ${db().unsafe(fileColumns)}`;
  return {
    status: 201,
    body: {
      ...presentFile(row!),
      upload: { method: "PUT", url, headers: {}, expires_at: new Date(Date.now() + ttlS * 1000).toISOString() },
    },
  };
}

async function uploadMultipart(request: Request, auth: { account: { id: string }; mode: string }) {
  const id = randomUUID();
  const tmp = join(scratchDir(), `upload-${id}`);
  const part = await receiveMultipartFile(request, tmp, config.maxUploadBytes, config.uploadTimeoutS * 1000);
  try {
    const filename = cleanFilename(part.filename);
    const identified = await identify(tmp, part.size, part.contentType, filename, "file");
    const contentType = cleanContentType(part.contentType);
    const key = fileKey(id);
    // The blob is stored before its row; if the row cannot be written, the blob goes too (a
    // crash between the two leaves an orphan that the sweeper's orphan check removes).
    await blobStore().put(key, tmp, contentType);
    try {
      const [row] = await db()<PresentedFileRow[]>`
        INSERT INTO files (id, account_id, mode, filename, content_type, kind, size_bytes, page_count, encrypted, status, storage_key, expires_at)
        VALUES (${id}, ${auth.account.id}, ${auth.mode}, ${filename}, ${contentType}, ${identified.kind}, ${part.size},
                ${identified.page_count}, ${identified.encrypted}, 'ready', ${key}, now() + make_interval(secs => ${config.fileTtlS}))
        RETURNING ${db().unsafe(fileColumns)}`;
      return { status: 201, body: presentFile(row!) };
    } catch (e) {
      await blobStore()
        .delete(key)
        .catch(() => {});
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
    {
      contentType: "multipart/form-data",
      schema: T.Object({ file: T.String({ format: "binary" }) }),
      description: "Multipart upload with one `file` part.",
    },
    { contentType: "application/json", schema: PresignRequest, description: "Or JSON to request a presigned PUT URL." },
  ],
  responses: {
    201: {
      description:
        "Multipart: the uploaded file, status ready. JSON: the file (status pending_upload) with `upload` (this service's fields, not in the spec): PUT the bytes to `upload.url` with `upload.headers` before `upload.expires_at`, then call POST /files/{file_id}/complete.",
      schema: T.Union([FileObject, PresignedUpload]),
    },
  },
  errors: ["unsupported_file_type", "file_too_large", "file_unreadable", "presigned_unavailable", "store_unavailable"],
  handler: async ({ request, auth }) => {
    const type = (request.headers.get("content-type") || "").toLowerCase();
    if (type.startsWith("multipart/form-data")) return uploadMultipart(request, auth);
    if (type.startsWith("application/json")) return presignUpload(await readJson(request), auth);
    throw new ApiError(
      "validation_error",
      "Send multipart/form-data with one `file` part, or JSON for a presigned upload.",
      null,
    );
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
  description:
    "Checks that the object was PUT, that its size is the declared `size_bytes` (else 400 upload_size_mismatch), sniffs its type from the bytes (415 unsupported_file_type on a mismatch) and counts its pages; the file becomes ready. A refused upload's object and file are deleted. Completing a ready file is a harmless no-op.",
  errors: [
    "not_found",
    "mode_mismatch",
    "file_not_ready",
    "upload_size_mismatch",
    "unsupported_file_type",
    "file_too_large",
    "file_unreadable",
    "presigned_unavailable",
    "store_unavailable",
  ],
  handler: async ({ auth, params }) => {
    const file = await ownedFile(auth, params.file_id);
    // Multipart uploads are ready at once, and completing twice is harmless: a no-op.
    if (file.status === "ready") return { status: 200, body: presentFile(file) };
    const store = blobStore();
    if (store.kind !== "s3")
      throw new ApiError("presigned_unavailable", "Presigned uploads need an object store, and none is configured.");
    const size = await store.size(file.storage_key);
    if (size === null)
      throw new ApiError(
        "file_not_ready",
        "Nothing has been uploaded to this file's URL yet; PUT the bytes, then complete.",
        "file_id",
      );
    const refuse = async (e: ApiError) => {
      await db()`UPDATE files SET status = 'deleted', deleted_at = now() WHERE id = ${file.id} AND status = 'pending_upload'`;
      await store.delete(file.storage_key);
      return e;
    };
    if (size > config.maxUploadBytes)
      throw await refuse(
        new ApiError(
          "file_too_large",
          `The upload is larger than the maximum of ${config.maxUploadBytes} bytes; the file was deleted.`,
          "file_id",
        ),
      );
    if (size !== Number(file.size_bytes)) {
      throw await refuse(
        new ApiError(
          "upload_size_mismatch",
          `The uploaded object has ${size} bytes but ${file.size_bytes} were declared; the file was deleted.`,
          "size_bytes",
        ),
      );
    }
    // The inspector reads a local file: a private scratch copy, streamed from the store.
    const tmp = join(scratchDir(), `complete-${file.id}-${randomUUID()}`);
    try {
      await store.localCopy(file.storage_key, tmp);
      let identified;
      try {
        identified = await identify(tmp, size, file.content_type, file.filename, "file_id");
      } catch (e) {
        if (e instanceof ApiError) throw await refuse(e);
        throw e;
      }
      const [row] = await db()<PresentedFileRow[]>`
        UPDATE files SET status = 'ready', kind = ${identified.kind}, page_count = ${identified.page_count}, encrypted = ${identified.encrypted}
         WHERE id = ${file.id} AND status IN ('pending_upload', 'ready')
         RETURNING ${db().unsafe(fileColumns)}`;
      if (!row) throw new ApiError("not_found", "No such file (deleted or expired).", "file_id");
      return { status: 200, body: presentFile(row) };
    } finally {
      await rm(tmp, { force: true });
    }
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
    const rows = await db()<PresentedFileRow[]>`
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
    if (file.storage_key) await blobStore().delete(file.storage_key);
    return { status: 200, body: { id: file.id, object: "file", deleted: true } };
  },
});

export const fileRoutes = [createFile, listFiles, getFile, completeFile, deleteFile];
