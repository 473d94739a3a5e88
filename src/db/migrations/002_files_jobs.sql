-- Files, jobs (the queue), the events outbox, the credit ledger and idempotency records.
CREATE TYPE job_status AS ENUM ('queued', 'running', 'succeeded', 'failed', 'cancelled');

CREATE TABLE files (
  id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id   uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  mode         text NOT NULL CHECK (mode IN ('live', 'test')),
  filename     text NOT NULL,
  content_type text NOT NULL,
  kind         text NOT NULL,           -- pdf, docx, xlsx, csv, jpeg, png, webp (sniffed from bytes)
  size_bytes   bigint NOT NULL,
  page_count   integer,
  encrypted    boolean NOT NULL DEFAULT false,
  status       text NOT NULL CHECK (status IN ('pending_upload', 'ready', 'deleted', 'expired')),
  storage_key  text,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  deleted_at   timestamptz
);
CREATE INDEX files_list ON files (account_id, mode, created_at DESC, id DESC) WHERE status IN ('ready', 'pending_upload');
CREATE INDEX files_expiry ON files (expires_at) WHERE status IN ('ready', 'pending_upload');

CREATE TABLE jobs (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id       uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key_id           uuid NOT NULL REFERENCES api_keys (id),
  mode             text NOT NULL CHECK (mode IN ('live', 'test')),
  operation        text NOT NULL,
  kind             text NOT NULL,
  status           job_status NOT NULL DEFAULT 'queued',
  file_ids         uuid[] NOT NULL,
  options          jsonb NOT NULL DEFAULT '{}',
  metadata         jsonb NOT NULL DEFAULT '{}',
  pages_estimated  integer NOT NULL,
  credits_per_page integer NOT NULL,
  credits_reserved integer NOT NULL DEFAULT 0,
  billed           boolean NOT NULL DEFAULT false,
  pages_processed  integer,
  progress_done    integer NOT NULL DEFAULT 0,
  progress_total   integer NOT NULL DEFAULT 0,
  result           jsonb,                -- {type: file|json, storage_key, content_type, filename, bytes, ...}
  result_expires_at timestamptz,
  result_deleted_at timestamptz,
  error            jsonb,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 2,
  worker_id        text,
  lease_expires_at timestamptz,
  cancel_requested boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_queue ON jobs (created_at, id) WHERE status = 'queued';
CREATE INDEX jobs_running_lease ON jobs (lease_expires_at) WHERE status = 'running';
CREATE INDEX jobs_list ON jobs (account_id, mode, created_at DESC, id DESC);
CREATE INDEX jobs_active_per_key ON jobs (key_id) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_result_expiry ON jobs (result_expires_at) WHERE result_expires_at IS NOT NULL AND result_deleted_at IS NULL;

-- The outbox: an event row commits with the state change it announces.
CREATE TABLE events (
  id          text PRIMARY KEY,          -- evt_...
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  mode        text NOT NULL CHECK (mode IN ('live', 'test')),
  type        text NOT NULL,
  payload     jsonb NOT NULL,            -- the full event envelope as delivered
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_account ON events (account_id, mode, created_at DESC);

-- Append-only credit ledger. Amounts are positive; `entry` says which way they count:
-- reserve (held at accept), release (hold returned), charge (settled usage).
CREATE TABLE credit_ledger (
  id          bigserial PRIMARY KEY,
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  job_id      uuid REFERENCES jobs (id) ON DELETE SET NULL,
  entry       text NOT NULL CHECK (entry IN ('reserve', 'release', 'charge')),
  credits     integer NOT NULL CHECK (credits >= 0),
  pages       integer NOT NULL CHECK (pages >= 0),
  operation   text NOT NULL,
  period      text NOT NULL,             -- YYYY-MM (UTC) the entry counts toward
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_ledger_period ON credit_ledger (account_id, period, id);
CREATE UNIQUE INDEX credit_ledger_once ON credit_ledger (job_id, entry) WHERE job_id IS NOT NULL;

CREATE TABLE idempotency_records (
  key_id          uuid NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
  idempotency_key text NOT NULL,
  request_hash    text NOT NULL,
  state           text NOT NULL CHECK (state IN ('in_progress', 'done')),
  response_status integer,
  response_body   jsonb,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  PRIMARY KEY (key_id, idempotency_key)
);
CREATE INDEX idempotency_expiry ON idempotency_records (expires_at);
