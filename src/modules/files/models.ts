import { Type as T } from "@sinclair/typebox";

export const FileObject = T.Object({
  id: T.String({ format: "uuid" }),
  object: T.Literal("file"),
  filename: T.String(),
  content_type: T.String(),
  type: T.String({ description: "kind decided from the bytes: pdf, docx, xlsx, csv, jpeg, png, webp" }),
  size_bytes: T.Integer(),
  page_count: T.Union([T.Integer(), T.Null()], { description: "null only for an encrypted PDF whose pages cannot be counted without the password" }),
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
    starting_after: T.Optional(T.String({ format: "uuid", description: "cursor: the id of the last object of the previous page" })),
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

export const Deleted = T.Object({ id: T.String({ format: "uuid" }), object: T.String(), deleted: T.Literal(true) });
