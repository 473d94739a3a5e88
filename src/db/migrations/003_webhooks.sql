-- Webhook endpoints, the delivery log (one row per attempt, which is also the delivery queue),
-- the fan-out trigger from the events outbox, and the server secret that encrypts endpoint secrets.

-- Server-side secrets shared by every API and worker node of one database. Today one row:
-- 'webhook_secret_key', the AES-256-GCM key for endpoint secrets when WEBHOOK_SECRET_KEY is
-- not set. The row is created on first use (INSERT ... ON CONFLICT DO NOTHING), never logged.
CREATE TABLE server_secrets (
  name       text PRIMARY KEY,
  value      bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_endpoints (
  id                   uuid PRIMARY KEY,
  account_id           uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  mode                 text NOT NULL CHECK (mode IN ('live', 'test')),
  url                  text NOT NULL CHECK (char_length(url) <= 2048),
  description          text CHECK (char_length(description) <= 255),
  -- Subscribed event types; empty = all types.
  events               text[] NOT NULL DEFAULT '{}',
  enabled              boolean NOT NULL DEFAULT true,
  disabled_reason      text,
  -- The whsec_ secret, AES-256-GCM: 12-byte nonce || 16-byte tag || ciphertext, with the
  -- endpoint id as additional data. `secret_key_id` names the server key that encrypted it.
  secret_ciphertext    bytea NOT NULL,
  secret_key_id        text NOT NULL,
  consecutive_failures integer NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  deleted_at           timestamptz
);
CREATE INDEX webhook_endpoints_list ON webhook_endpoints (account_id, mode, created_at) WHERE deleted_at IS NULL;

-- One row per delivery attempt. The first attempt is inserted `pending` by the fan-out
-- trigger; a dispatcher claims due rows (`in_flight` with a lease), records the outcome on the
-- same row and, after a failure, inserts the next attempt as a new `pending` row. So the log
-- and the queue are one table, and a crash can lose neither.
CREATE TABLE webhook_deliveries (
  id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id     uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id        text NOT NULL,
  event_type      text NOT NULL,
  attempt         integer NOT NULL CHECK (attempt >= 1),
  status          text NOT NULL CHECK (status IN ('pending', 'in_flight', 'succeeded', 'failed')),
  next_attempt_at timestamptz,           -- when a pending row is due
  locked_until    timestamptz,           -- lease of an in_flight row; expired = its dispatcher died
  locked_by       text,
  response_status integer,
  error           text,
  duration_ms     integer,
  attempted_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id, attempt)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_lease ON webhook_deliveries (locked_until) WHERE status = 'in_flight';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at DESC, attempt DESC);

-- Fan-out: every event committed to the outbox becomes one pending delivery per enabled,
-- subscribed endpoint of the same account and mode, in the same transaction as the event.
-- webhook.test is sent synchronously by POST /webhooks/{id}/test, never fanned out.
CREATE FUNCTION webhook_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  n integer;
BEGIN
  IF NEW.type = 'webhook.test' THEN
    RETURN NULL;
  END IF;
  INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, attempt, status, next_attempt_at)
  SELECT e.id, NEW.id, NEW.type, 1, 'pending', now()
    FROM webhook_endpoints e
   WHERE e.account_id = NEW.account_id AND e.mode = NEW.mode
     AND e.enabled AND e.deleted_at IS NULL
     AND (cardinality(e.events) = 0 OR NEW.type = ANY (e.events));
  GET DIAGNOSTICS n = ROW_COUNT;
  IF n > 0 THEN
    -- Delivered at commit; identical notifications of one transaction collapse into one.
    PERFORM pg_notify('webhooks', '');
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER events_webhook_fan_out AFTER INSERT ON events
  FOR EACH ROW EXECUTE FUNCTION webhook_fan_out();
