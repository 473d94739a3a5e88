import { Type as T } from "@sinclair/typebox";
import { operationNames } from "../../domain/operations";
import { jobStatuses } from "../../domain/job-states";

export const CreateJobRequest = T.Object(
  {
    operation: T.String({ minLength: 1, maxLength: 64, description: `one of ${operationNames.join(", ")}` }),
    file_id: T.Optional(T.Union([T.String({ format: "uuid" }), T.Null()])),
    file_ids: T.Optional(T.Union([T.Array(T.String({ format: "uuid" }), { maxItems: 50 }), T.Null()])),
    options: T.Optional(
      T.Union([
        T.Object(
          {},
          {
            additionalProperties: true,
            description: "per operation; see GET /operations (and the schemas Options_<operation> of this document)",
          },
        ),
        T.Null(),
      ]),
    ),
    metadata: T.Optional(
      T.Union([
        T.Record(T.String({ minLength: 1, maxLength: 40 }), T.String({ maxLength: 500 }), {
          maxProperties: 20,
          description: "up to 20 string keys",
        }),
        T.Null(),
      ]),
    ),
  },
  { additionalProperties: false },
);

export const JobObject = T.Object({
  id: T.String({ format: "uuid" }),
  object: T.Literal("job"),
  operation: T.String(),
  kind: T.Union(
    ["ocr", "convert", "compress", "merge", "split", "page_ops", "protect", "unlock", "redact"].map((k) =>
      T.Literal(k),
    ),
  ),
  status: T.Union(jobStatuses.map((s) => T.Literal(s))),
  file_id: T.Union([T.String({ format: "uuid" }), T.Null()]),
  file_ids: T.Union([T.Array(T.String({ format: "uuid" })), T.Null()]),
  options: T.Object({}, { additionalProperties: true }),
  metadata: T.Record(T.String(), T.String()),
  credits: T.Object({
    billed: T.Boolean(),
    pages_estimated: T.Integer(),
    credits_per_page: T.Integer(),
    credits_reserved: T.Integer(),
  }),
  progress: T.Object({
    pages_done: T.Integer(),
    pages_total: T.Integer(),
    percent: T.Integer({ minimum: 0, maximum: 100 }),
  }),
  result: T.Union([
    T.Object({
      download_url: T.String({ format: "uri" }),
      pages_processed: T.Integer(),
      type: T.Union([T.Literal("file"), T.Literal("json")]),
      filename: T.Union([T.String(), T.Null()]),
      content_type: T.Union([T.String(), T.Null()]),
      bytes: T.Union([T.Integer(), T.Null()]),
      expires_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
      note: T.Optional(T.String()),
    }),
    T.Null(),
  ]),
  error: T.Union([T.Object({ code: T.String(), message: T.String() }), T.Null()]),
  sandbox: T.Boolean(),
  livemode: T.Boolean(),
  attempts: T.Integer(),
  created_at: T.String({ format: "date-time" }),
  started_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
  finished_at: T.Union([T.String({ format: "date-time" }), T.Null()]),
});

export const JobIdParams = T.Object({ job_id: T.String({ format: "uuid" }) }, { additionalProperties: false });

export const ListJobsQuery = T.Object(
  {
    limit: T.Optional(T.Integer({ minimum: 1, maximum: 100, default: 20 })),
    starting_after: T.Optional(T.String({ format: "uuid" })),
    status: T.Optional(T.Union(jobStatuses.map((s) => T.Literal(s)))),
  },
  { additionalProperties: false },
);

export const ResultQuery = T.Object(
  {
    format: T.Optional(T.Union([T.Literal("download"), T.Literal("json"), T.Literal("url")], { default: "download" })),
  },
  { additionalProperties: false },
);
