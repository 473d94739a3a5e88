// Writes an event to the outbox inside the caller's transaction, so an event exists exactly
// when the change it announces committed. Webhook fan-out reads from this table.
import { randomBytes } from "node:crypto";
import type { Queryable } from "../db/client";
import { apiVersion } from "../domain/pricing";
import type { Mode } from "../domain/scopes";

export type EventType = "job.succeeded" | "job.failed" | "job.cancelled" | "file.expired" | "webhook.test";
export const eventTypes: EventType[] = ["job.succeeded", "job.failed", "job.cancelled", "file.expired", "webhook.test"];

export interface EventEnvelope {
  id: string;
  object: "event";
  type: EventType;
  api_version: string;
  livemode: boolean;
  created_at: string;
  data: { object: unknown };
}

export function newEventId(): string {
  return "evt_" + randomBytes(16).toString("hex");
}

export function buildEvent(type: EventType, mode: Mode, object: unknown, at = new Date()): EventEnvelope {
  return {
    id: newEventId(),
    object: "event",
    type,
    api_version: apiVersion,
    livemode: mode === "live",
    created_at: at.toISOString(),
    data: { object },
  };
}

/** `tx` must be the transaction that makes the announced change. */
export async function recordEvent(
  tx: Queryable,
  accountId: string,
  mode: Mode,
  type: EventType,
  object: unknown,
): Promise<EventEnvelope> {
  const event = buildEvent(type, mode, object);
  await tx`INSERT INTO events (id, account_id, mode, type, payload, created_at)
           VALUES (${event.id}, ${accountId}, ${mode}, ${type}, ${tx.json(event as never)}, ${event.created_at})`;
  return event;
}
