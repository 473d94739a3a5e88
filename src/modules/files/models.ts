import { Type as T } from "@sinclair/typebox";

export const FileObject = T.Object({
  id: T.String({ format: "uuid" }),
  object: T.Literal("file"),
  filename: T.String(),
  content_type: T.String(),
  type: T.String({ description: "kind decided from the bytes: pdf, docx, xlsx, csv, jpeg, png, webp" }),
  size_bytes: T.Integer(),
  page_count: T.Union([T.Integer(), T.Null()], {
    description: "null only for an encrypted PDF whose pages cannot be counted without the password",
  }),
  encrypted: T.Boolean(),
  status: T.Union([T.Literal("ready"), T.Literal("pending_upload")]),
  livemode: T.Boolean(),
  created_at: T.String({ format: "date-time" }),
  expires_at: T.String({ format: "date-time" }),
});

export const listOf = (item: ReturnType<typeof T.Object>) =>
  T.Object({ object: T.Literal("list"), data: T.Array(item), has_more: T.Boolean() });

export const FileIdParams = T.Object({ file_id: T.String({ format: "uuid" }) }, { additionalProperties: false });

export const ListQuery = T.Object(
  {
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, default: 20 })),
    starting_after: T.Optional(
      T.String({ format: "uuid", description: "cursor: the id of the last object of the previous page" }),
    ),
  },
  { additionalProperties: false },
);

export const PresignRequest = T.Object(
  {
    filename: T.String({ minLength: 1, maxLength: 255 }),
    content_type: T.String({ minLength: 1, maxLength: 255 }),
    size_bytes: T.Integer({ minimum: 1 }),
  },
  { additionalProperties: false },
);

/** POST /files with JSON: the pending file and where to PUT its bytes (this service's fields). */
export const PresignedUpload = T.Composite([
  FileObject,
  T.Object({
    upload: T.Object({
      method: T.Literal("PUT"),
      url: T.String({ format: "uri", description: "presigned PUT URL of the object store" }),
      headers: T.Record(T.String(), T.String(), {
        description: "headers the client must send with the PUT (none today)",
      }),
      expires_at: T.String({
        format: "date-time",
        description: "the URL stops working at this time (1 hour, or the file's TTL if shorter)",
      }),
    }),
  }),
]);

export const Deleted = T.Object({ id: T.String({ format: "uuid" }), object: T.String(), deleted: T.Literal(true) });
