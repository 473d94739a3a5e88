// Webhook endpoints: create (the only response with the secret), list, get, update, delete,
// send a test event, and the delivery log. Scope webhooks:manage; partitioned per mode.
import { route } from "../common/route";
import { otherLimits } from "../../domain/pricing";
import {
  CreateWebhookRequest,
  DeletedWebhook,
  DeliveriesQuery,
  UpdateWebhookRequest,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookIdParams,
  listOf,
} from "./models";
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listDeliveries,
  listEndpoints,
  sendTestEvent,
  updateEndpoint,
} from "./service";

const tag = "Webhooks";
const scope = "webhooks:manage" as const;

export const createWebhook = route({
  method: "POST",
  path: "/webhooks",
  operationId: "createWebhook",
  summary: "Register a webhook endpoint",
  description: `At most ${otherLimits.webhook_endpoints_per_mode} endpoints per mode. The response carries the signing secret (\`whsec_...\`), which is never shown again. URLs that resolve to loopback, private, link-local or other non-public addresses are refused.`,
  tag,
  scope,
  body: CreateWebhookRequest,
  responses: { 201: { description: "The endpoint, with its one-time secret.", schema: WebhookEndpointWithSecret } },
  errors: ["webhook_limit_reached"],
  handler: async ({ auth, body }) => ({ status: 201, body: await createEndpoint(auth, body as never) }),
});

export const listWebhooks = route({
  method: "GET",
  path: "/webhooks",
  operationId: "listWebhooks",
  summary: "List webhook endpoints of this mode, newest first",
  tag,
  scope,
  responses: {
    200: {
      description: "Every endpoint of the key's mode (at most 10, so one page).",
      schema: listOf(WebhookEndpoint),
    },
  },
  errors: [],
  handler: async ({ auth }) => ({ status: 200, body: await listEndpoints(auth) }),
});

export const getWebhook = route({
  method: "GET",
  path: "/webhooks/:webhook_id",
  operationId: "getWebhook",
  summary: "Get a webhook endpoint",
  tag,
  scope,
  params: WebhookIdParams,
  responses: { 200: { description: "The endpoint (never its secret).", schema: WebhookEndpoint } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => ({ status: 200, body: await getEndpoint(auth, params.webhook_id) }),
});

export const updateWebhook = route({
  method: "PATCH",
  path: "/webhooks/:webhook_id",
  operationId: "updateWebhook",
  summary: "Update a webhook endpoint; enabled: true re-enables it",
  description:
    "Send any of `url`, `description`, `events`, `enabled`. Absent fields are unchanged; null leaves `url`, `events` and `enabled` unchanged and clears `description`. `enabled: true` clears `disabled_reason` and the failure count, and attempts held while the endpoint was disabled resume.",
  tag,
  scope,
  params: WebhookIdParams,
  body: UpdateWebhookRequest,
  responses: { 200: { description: "The updated endpoint.", schema: WebhookEndpoint } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params, body }) => ({
    status: 200,
    body: await updateEndpoint(auth, params.webhook_id, body as never),
  }),
});

export const deleteWebhook = route({
  method: "DELETE",
  path: "/webhooks/:webhook_id",
  operationId: "deleteWebhook",
  summary: "Delete a webhook endpoint",
  description: "Its secret is destroyed and attempts not yet made are dropped.",
  tag,
  scope,
  params: WebhookIdParams,
  responses: { 200: { description: "Deleted.", schema: DeletedWebhook } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params }) => ({ status: 200, body: await deleteEndpoint(auth, params.webhook_id) }),
});

export const testWebhook = route({
  method: "POST",
  path: "/webhooks/:webhook_id/test",
  operationId: "testWebhook",
  summary: "Send a signed webhook.test event now",
  description:
    "Synchronous: answers 200 with the recorded attempt when the endpoint answers 2xx within 10 seconds, else 502 `webhook_delivery_failed` (the error carries the attempt as `delivery`). Sent to this endpoint only, and only when it subscribes to `webhook.test` (empty `events` = all types; otherwise 409 `webhook_not_subscribed`). Test events are not retried; `data.object` is the endpoint.",
  tag,
  scope,
  params: WebhookIdParams,
  responses: {
    200: { description: "The endpoint accepted the event; the recorded attempt.", schema: WebhookDelivery },
  },
  errors: ["not_found", "mode_mismatch", "webhook_not_subscribed", "webhook_delivery_failed"],
  handler: async ({ auth, params, requestId }) => ({
    status: 200,
    body: await sendTestEvent(auth, params.webhook_id, requestId),
  }),
});

export const listWebhookDeliveries = route({
  method: "GET",
  path: "/webhooks/:webhook_id/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "The delivery log: every attempt, newest first",
  description:
    "One record per attempt, including a scheduled (pending) next attempt. Finished attempts are kept for 30 days (a choice of this service; the spec sets no retention).",
  tag,
  scope,
  params: WebhookIdParams,
  query: DeliveriesQuery,
  responses: { 200: { description: "The newest attempts.", schema: listOf(WebhookDelivery) } },
  errors: ["not_found", "mode_mismatch"],
  handler: async ({ auth, params, query }) => ({
    status: 200,
    body: await listDeliveries(auth, params.webhook_id, query.limit ?? 20),
  }),
});

export const webhookRoutes = [
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  testWebhook,
  listWebhookDeliveries,
];
