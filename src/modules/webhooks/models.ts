// TypeBox models of the webhook endpoints API: requests (validated) and responses (documented).
import { Type as T, type TSchema } from "@sinclair/typebox";
import { eventTypes } from "../../events/record";
import { otherLimits } from "../../domain/pricing";

export const EventType = T.Union(
  eventTypes.map((t) => T.Literal(t)),
  { description: "an event type" },
);

const Events = T.Array(EventType, {
  uniqueItems: true,
  description: "Subscribed event types; an empty array (the default) means all types.",
});

const Url = T.String({
  minLength: 1,
  maxLength: otherLimits.webhook_url_max_chars,
  description:
    "Where events are POSTed. https only for live keys (http is allowed with sandbox keys). Must resolve to a public address.",
});

const Description = T.String({ maxLength: otherLimits.webhook_description_max_chars });

const nullable = <S extends TSchema>(s: S, description?: string) =>
  T.Union([s, T.Null()], description ? { description } : {});

export const CreateWebhookRequest = T.Object(
  {
    url: Url,
    events: T.Optional(nullable(Events, "Subscribed event types; empty or null = all types.")),
    description: T.Optional(nullable(Description)),
  },
  { additionalProperties: false },
);

export const UpdateWebhookRequest = T.Object(
  {
    url: T.Optional(nullable(Url, "A new url; null or absent leaves it unchanged.")),
    description: T.Optional(nullable(Description, "A new description; null clears it.")),
    events: T.Optional(nullable(Events, "A new subscription (empty = all types); null or absent leaves it unchanged.")),
    enabled: T.Optional(
      nullable(
        T.Boolean(),
        "true re-enables the endpoint and clears `disabled_reason`; false pauses it; null or absent leaves it unchanged.",
      ),
    ),
  },
  { additionalProperties: false },
);

export const WebhookIdParams = T.Object({ webhook_id: T.String({ format: "uuid" }) }, { additionalProperties: false });

export const DeliveriesQuery = T.Object(
  {
    limit: T.Optional(
      T.Integer({ minimum: 1, maximum: 100, default: 20, description: "how many attempts, newest first" }),
    ),
  },
  { additionalProperties: false },
);

const endpointFields = {
  id: T.String({ format: "uuid" }),
  object: T.Literal("webhook_endpoint"),
  url: T.String(),
  description: T.Union([T.String(), T.Null()]),
  events: T.Array(EventType, { description: "empty = all types" }),
  enabled: T.Boolean(),
  disabled_reason: T.Union([T.String(), T.Null()], {
    description: "why the service disabled the endpoint (after 30 consecutive failed attempts); null otherwise",
  }),
  livemode: T.Boolean(),
  created_at: T.String({ format: "date-time" }),
  updated_at: T.String({ format: "date-time" }),
};

export const WebhookEndpoint = T.Object(endpointFields);

export const WebhookEndpointWithSecret = T.Object({
  ...endpointFields,
  secret: T.String({ description: "`whsec_...`: the signing secret. Returned only here; store it now." }),
});

export const WebhookDelivery = T.Object({
  id: T.String({ format: "uuid" }),
  object: T.Literal("webhook_delivery"),
  webhook_id: T.String({ format: "uuid" }),
  event_id: T.String({ description: "evt_...; the same on every attempt of an event" }),
  event_type: T.String(),
  attempt: T.Integer({ minimum: 1, description: "1 to 6" }),
  status: T.Union([T.Literal("pending"), T.Literal("in_flight"), T.Literal("succeeded"), T.Literal("failed")]),
  response_status: T.Union([T.Integer(), T.Null()], { description: "the endpoint's HTTP status, when it answered" }),
  error: T.Union([T.String(), T.Null()], {
    description: "why the attempt failed without an answer (network error, timeout, refused target, redirect)",
  }),
  duration_ms: T.Union([T.Integer(), T.Null()]),
  livemode: T.Boolean(),
  created_at: T.String({ format: "date-time", description: "when the attempt was scheduled" }),
  attempted_at: T.Union([T.String({ format: "date-time" }), T.Null()], {
    description: "when it was sent; null while pending",
  }),
  next_attempt_at: T.Union([T.String({ format: "date-time" }), T.Null()], {
    description: "when a pending attempt is due; null otherwise",
  }),
});

export const listOf = (item: TSchema) =>
  T.Object({ object: T.Literal("list"), data: T.Array(item), has_more: T.Boolean() });

export const DeletedWebhook = T.Object({
  id: T.String({ format: "uuid" }),
  object: T.Literal("webhook_endpoint"),
  deleted: T.Literal(true),
});
