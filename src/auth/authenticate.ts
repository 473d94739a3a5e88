// Turns an Authorization header into the key and account a request acts for. Only the
// Bearer key decides: cookies and the X-Internal-Token / X-Account-Id headers never do.
import { db } from "../db/client";
import type { Mode, Scope } from "../domain/scopes";
import type { PlanName } from "../domain/pricing";
import { ApiError } from "../domain/errors";
import { keyMatches, parseKey } from "./api-keys";

export interface AuthenticatedKey {
  keyId: string;
  mode: Mode;
  scopes: Scope[];
  last4: string;
  expiresAt: Date | null;
  createdAt: Date;
  account: {
    id: string;
    email: string;
    plan: PlanName;
    emailVerified: boolean;
    spendingCapEur: number | null;
    /** The operator's page limit per job for this account (null: the mode's). */
    pagesPerJob: number | null;
    createdAt: Date;
  };
}

export async function authenticate(authorization: string | null): Promise<AuthenticatedKey> {
  if (!authorization?.trim()) {
    throw new ApiError(
      "authentication_required",
      "Send your API key as `Authorization: Bearer <key>`. Cookies are not accepted.",
    );
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  if (!m)
    throw new ApiError(
      "authentication_required",
      "The Authorization header must use the Bearer scheme: `Authorization: Bearer <key>`.",
    );
  const key = m[1]!;
  const parsed = parseKey(key);
  if (!parsed) throw new ApiError("invalid_api_key", "The API key is not valid.");
  const rows = await db()`
    SELECT k.id, k.mode, k.scopes, k.secret_hash, k.last4, k.expires_at, k.revoked_at, k.created_at,
           a.id AS account_id, a.email, a.plan, a.email_verified, a.spending_cap_eur, a.pages_per_job, a.created_at AS account_created_at,
           (k.expires_at IS NOT NULL AND k.expires_at <= now()) AS expired
      FROM api_keys k JOIN accounts a ON a.id = k.account_id
     WHERE k.lookup = ${parsed.lookup}`;
  const row = rows[0];
  // Compare even when no row matched, so that timing says nothing about which prefixes exist.
  const matches = keyMatches(key, row ? (row.secret_hash as Buffer) : Buffer.alloc(32));
  if (!row || !matches || row.mode !== parsed.mode) throw new ApiError("invalid_api_key", "The API key is not valid.");
  if (row.revoked_at) throw new ApiError("invalid_api_key", "The API key has been revoked.");
  if (row.expired) throw new ApiError("invalid_api_key", "The API key has expired.");
  return {
    keyId: row.id,
    mode: row.mode,
    scopes: row.scopes,
    last4: row.last4,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    account: {
      id: row.account_id,
      email: row.email,
      plan: row.plan,
      emailVerified: row.email_verified,
      spendingCapEur: row.spending_cap_eur === null ? null : Number(row.spending_cap_eur),
      pagesPerJob: row.pages_per_job,
      createdAt: row.account_created_at,
    },
  };
}
