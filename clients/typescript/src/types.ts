// Named types for the client's surface, taken from the generated schema (src/schema.ts) so they
// follow the served OpenAPI document; only the OCR blocks and the event envelope, which the
// document does not describe, are written here (from docs/ocr.md and the API spec (docs/api.md), Events).
import type { operations } from "./schema";

type Json<O extends keyof operations, S extends number> =
  operations[O]["responses"] extends Record<S, { content: { "application/json": infer B } }> ? B : never;

export type File = Json<"getFile", 200>;
export type Job = Json<"getJob", 200>;
export type JobStatus = Job["status"];
export type JobRequest = NonNullable<operations["createJob"]["requestBody"]>["content"]["application/json"];

/** GET /jobs/{id}/result?format=url (README, Result URL); the document leaves this body undescribed. */
export interface ResultUrl {
  object: "job_result_url";
  job_id: string;
  /** Presigned GET of the object store; no API key needed. */
  url: string;
  /** ISO 8601; 15 minutes after the call, never past the result's own expiry. */
  expires_at: string;
  filename: string;
  content_type: string;
  bytes: number;
}

/** OCR `output: blocks` result (GET /jobs/{id}/result?format=json); see docs/ocr.md. */
export interface OcrWord {
  text: string;
  bbox: [number, number, number, number];
  confidence: number;
}
export interface OcrLine extends OcrWord {
  words: OcrWord[];
}
export interface OcrBlock {
  bbox: [number, number, number, number];
  lines: OcrLine[];
}
export interface OcrPage {
  page: number;
  width: number;
  height: number;
  ocr: boolean;
  skipped?: string;
  dpi?: number;
  text_rotation: number;
  text: string;
  blocks: OcrBlock[];
}
export interface OcrResult {
  mode: string;
  engine: string;
  unit: "pt";
  origin: "top-left";
  pages: OcrPage[];
}

/** A webhook delivery's body (the API spec (docs/api.md), Event). */
export interface WebhookEvent {
  id: string;
  object: "event";
  type: "job.succeeded" | "job.failed" | "job.cancelled" | "file.expired" | "webhook.test";
  api_version: string;
  livemode: boolean;
  created_at: string;
  data: { object: Record<string, unknown> };
}
