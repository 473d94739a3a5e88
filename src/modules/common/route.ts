// A route is declared once: method, path, scope, TypeBox schemas and handler. The same
// declaration registers the Elysia handler, validates requests and generates the OpenAPI entry.
import type { TObject, TSchema } from "@sinclair/typebox";
import type { ErrorCode } from "../../domain/errors";
import type { Scope } from "../../domain/scopes";
import type { AuthenticatedKey } from "../../auth/authenticate";

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export interface HandlerInput<P, Q, B> {
  request: Request;
  requestId: string;
  /** Present on every authenticated route. */
  auth: AuthenticatedKey;
  params: P;
  query: Q;
  body: B;
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ResponseDoc {
  description: string;
  schema?: TSchema;
  /** Default application/json. */
  contentType?: string;
  headers?: string[];
}

export interface HeaderDoc {
  name: string;
  description: string;
  schema: TSchema;
}

export interface RouteDef<P = any, Q = any, B = any> {
  method: Method;
  /** Relative to /api/v1, Elysia syntax: /files/:file_id */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** An addition to the API contract: marked `x-extension` in the OpenAPI document. */
  extension?: boolean;
  /** `none` = no authentication; `any` = any valid key. */
  scope: Scope | "any" | "none";
  params?: TObject;
  query?: TObject;
  /** JSON body schema. */
  body?: TSchema;
  /** Non-JSON request bodies (documented here, read by the handler itself). */
  rawBody?: { contentType: string; schema: TSchema; description: string }[];
  /** Request headers beyond the common ones (e.g. Idempotency-Key). */
  headers?: HeaderDoc[];
  responses: Record<number, ResponseDoc>;
  /** Error codes this route can answer, for the OpenAPI document. */
  errors: ErrorCode[];
  handler: (input: HandlerInput<P, Q, B>) => Promise<Reply | Response> | Reply | Response;
}

export function route<P = any, Q = any, B = any>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> {
  return def;
}
