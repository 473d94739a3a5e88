// Reference routes: the error catalogue, pricing, the operation catalogue and the OpenAPI
// document, each served from its single definition in src/domain.
import { Type as T } from "@sinclair/typebox";
import { route, type RouteDef } from "../common/route";
import { errorCatalogue } from "../../domain/errors";
import { docUrl } from "../common/envelope";
import { limits, otherLimits, overage, plans, apiVersion } from "../../domain/pricing";
import {
  convertOptionsByTarget,
  convertPairs,
  operations,
  publishedOptionsSchema,
  unsupportedConvertTargets,
  unsupportedOperations,
} from "../../domain/operations";
import { config } from "../../config";

const ErrorEntry = T.Object({
  code: T.String(),
  status: T.Integer(),
  type: T.String(),
  meaning: T.String(),
  origin: T.Union([T.Literal("spec"), T.Literal("extension")]),
  used_in: T.Array(T.Union([T.Literal("http"), T.Literal("job")])),
  doc_url: T.String({ format: "uri" }),
});

export const listErrors = route({
  method: "GET",
  path: "/errors",
  operationId: "listErrors",
  summary: "Error code reference",
  tag: "Reference",
  scope: "none",
  responses: {
    200: {
      description: "Every error code with its HTTP status, type and meaning.",
      schema: T.Object({ object: T.Literal("list"), data: T.Array(ErrorEntry) }),
    },
  },
  errors: [],
  handler: () => ({
    status: 200,
    body: {
      object: "list",
      data: Object.entries(errorCatalogue).map(([code, d]) => ({
        code,
        status: d.status,
        type: d.type,
        meaning: d.meaning,
        origin: d.origin,
        used_in: d.usedIn,
        doc_url: docUrl(code),
      })),
    },
  }),
});

export function pricingDocument() {
  return {
    object: "pricing",
    api_version: apiVersion,
    currency: "EUR",
    plans: Object.entries(plans).map(([id, p]) => ({ id, ...p })),
    overage: {
      ...overage,
      applies_to: "live mode, after the plan's included credits; stopped by the account's spending cap",
    },
    credits_per_page: Object.fromEntries(Object.values(operations).map((o) => [o.name, o.creditsPerPage])),
    limits: {
      live: {
        ...limits.live,
        included_credits_per_month: plans.starter.included_credits_per_month,
        data_lifetime_hours: config.fileTtlS / 3600,
      },
      sandbox: {
        ...limits.test,
        included_credits_per_month: 0,
        billed: false,
        data_lifetime_hours: config.fileTtlS / 3600,
      },
      max_upload_bytes: config.maxUploadBytes,
      job_timeout_seconds: config.jobTimeoutS,
      ...otherLimits,
    },
  };
}

export const getPricing = route({
  method: "GET",
  path: "/pricing",
  operationId: "getPricing",
  summary: "Pricing and limits",
  tag: "Reference",
  scope: "none",
  responses: {
    200: {
      description: "Plans, prices, credits per operation and limits.",
      schema: T.Object({ object: T.Literal("pricing") }, { additionalProperties: true }),
    },
  },
  errors: [],
  handler: () => ({ status: 200, body: pricingDocument() }),
});

export function operationCatalogue() {
  return {
    object: "operation_catalogue",
    supported: Object.values(operations).map((o) => ({
      name: o.name,
      kind: o.kind,
      summary: o.summary,
      credits_per_page: o.creditsPerPage,
      billed: o.creditsPerPage > 0,
      available: o.available,
      ...(o.available ? {} : { unavailable_reason: o.unavailableReason }),
      input: o.inputs === "many" ? "file_ids" : "file_id",
      accepts: o.accepts,
      options: publishedOptionsSchema(o),
      ...(o.name === "convert" ? { convert_pairs: convertPairs, options_by_target: convertOptionsByTarget } : {}),
    })),
    unsupported: [
      ...Object.entries(unsupportedOperations).map(([name, reason]) => ({ name, reason })),
      ...Object.entries(unsupportedConvertTargets).map(([target, reason]) => ({
        name: `convert:${target}`,
        operation: "convert",
        target,
        reason,
      })),
    ],
  };
}

export const listOperations = route({
  method: "GET",
  path: "/operations",
  operationId: "listOperations",
  summary: "Operation catalogue",
  tag: "Reference",
  scope: "any",
  responses: {
    200: {
      description: "Supported operations with their options and credits; unsupported ones with a reason.",
      schema: T.Object({ object: T.Literal("operation_catalogue") }, { additionalProperties: true }),
    },
  },
  errors: [],
  handler: () => ({ status: 200, body: operationCatalogue() }),
});

export function openApiRoute(getDocument: () => object): RouteDef {
  return route({
    method: "GET",
    path: "/openapi.json",
    operationId: "getOpenApi",
    summary: "OpenAPI 3.1 description of this API",
    tag: "Reference",
    scope: "none",
    responses: {
      200: {
        description: "The OpenAPI document.",
        schema: T.Object({ openapi: T.String() }, { additionalProperties: true }),
      },
    },
    errors: [],
    handler: () => ({ status: 200, body: getDocument() }),
  });
}
