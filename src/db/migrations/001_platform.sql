-- Accounts, API keys and the shared rate-limit buckets.
CREATE TABLE accounts (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email            text NOT NULL UNIQUE,
  plan             text NOT NULL CHECK (plan IN ('starter', 'free')),
  email_verified   boolean NOT NULL DEFAULT true,
  spending_cap_eur numeric(12, 2),
  created_at       timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  account_id  uuid NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  mode        text NOT NULL CHECK (mode IN ('live', 'test')),
  -- The first characters of the secret part, stored in clear to find the row;
  -- the whole key is only ever stored as a SHA-256 hash.
  lookup      text NOT NULL UNIQUE,
  secret_hash bytea NOT NULL,
  last4       text NOT NULL,
  scopes      text[] NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  expires_at  timestamptz,
  revoked_at  timestamptz,
  replaced_by uuid REFERENCES api_keys (id)
);
CREATE INDEX api_keys_account ON api_keys (account_id);

-- Token bucket per key, shared by every API node.
CREATE TABLE rate_buckets (
  key_id      uuid PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
  tokens      double precision NOT NULL,
  refilled_at timestamptz NOT NULL,
  -- Whether the last request took a token; lets one upsert both decide and report.
  granted     boolean NOT NULL
);
