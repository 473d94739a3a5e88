// The admin operations (docs/operating.md, "Admin CLI") as plain functions over the database, used by the CLI
// and by the supervisor's first-start demo account.
import type { Sql } from "../db/client";
import { generateKey } from "../auth/api-keys";
import { allScopes, isScope, type Mode, type Scope } from "../domain/scopes";

export interface AccountJson {
  id: string;
  email: string;
  plan: "starter" | "free";
  email_verified: boolean;
  spending_cap_eur?: number | null;
  /** The account's page limit per job; null: the mode's (GET /pricing). */
  pages_per_job?: number | null;
}

function accountJson(r: Record<string, unknown>): AccountJson {
  return {
    id: r.id as string,
    email: r.email as string,
    plan: r.plan as "starter" | "free",
    email_verified: r.email_verified as boolean,
    spending_cap_eur: r.spending_cap_eur === null ? null : Number(r.spending_cap_eur),
    pages_per_job: r.pages_per_job as number | null,
  };
}

export async function createAccount(
  sql: Sql,
  email: string,
  plan: "starter" | "free" = "starter",
  verified = true,
): Promise<AccountJson> {
  if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw new Error(`not an email address: ${email}`);
  const [r] =
    await sql`INSERT INTO accounts (email, plan, email_verified) VALUES (${email}, ${plan}, ${verified}) RETURNING *`;
  const a = accountJson(r!);
  return { id: a.id, email: a.email, plan: a.plan, email_verified: a.email_verified };
}

export async function setAccount(
  sql: Sql,
  id: string,
  changes: {
    plan?: "starter" | "free";
    emailVerified?: boolean;
    spendingCapEur?: number | null;
    /** null: back to the mode's limit. */
    pagesPerJob?: number | null;
  },
): Promise<AccountJson> {
  const [r] = await sql`
    UPDATE accounts SET
      plan = COALESCE(${changes.plan ?? null}, plan),
      email_verified = COALESCE(${changes.emailVerified ?? null}, email_verified),
      spending_cap_eur = CASE WHEN ${changes.spendingCapEur !== undefined} THEN ${changes.spendingCapEur ?? null}::numeric ELSE spending_cap_eur END,
      pages_per_job = CASE WHEN ${changes.pagesPerJob !== undefined} THEN ${changes.pagesPerJob ?? null}::integer ELSE pages_per_job END
    WHERE id = ${id} RETURNING *`;
  if (!r) throw new Error(`no account ${id}`);
  return accountJson(r);
}

export interface KeyJson {
  id: string;
  key: string;
  mode: Mode;
  scopes: Scope[];
}

export async function createKey(
  sql: Sql,
  accountId: string,
  mode: Mode,
  scopes: string[] = [...allScopes],
  expiresInS?: number,
): Promise<KeyJson> {
  const bad = scopes.find((s) => !isScope(s));
  if (bad) throw new Error(`unknown scope: ${bad} (known: ${allScopes.join(", ")})`);
  const k = generateKey(mode);
  const [r] = await sql`
    INSERT INTO api_keys (account_id, mode, lookup, secret_hash, last4, scopes, expires_at)
    VALUES (${accountId}, ${mode}, ${k.lookup}, ${k.hash}, ${k.last4}, ${scopes},
            ${expiresInS === undefined ? null : sql`now() + make_interval(secs => ${expiresInS})`})
    RETURNING id`;
  return { id: r!.id, key: k.key, mode, scopes: scopes as Scope[] };
}

export async function revokeKey(sql: Sql, keyId: string): Promise<{ id: string; revoked: true }> {
  const rows = await sql`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = ${keyId} RETURNING id`;
  if (!rows.length) throw new Error(`no key ${keyId}`);
  return { id: keyId, revoked: true };
}

export async function rotateKey(
  sql: Sql,
  keyId: string,
  graceS: number,
): Promise<{ id: string; key: string; old_key_valid_until: string }> {
  return sql.begin(async (tx) => {
    const [old] = await tx`SELECT * FROM api_keys WHERE id = ${keyId} FOR UPDATE`;
    if (!old) throw new Error(`no key ${keyId}`);
    if (old.revoked_at) throw new Error(`key ${keyId} is revoked`);
    const k = generateKey(old.mode);
    const [n] = await tx`
      INSERT INTO api_keys (account_id, mode, lookup, secret_hash, last4, scopes)
      VALUES (${old.account_id}, ${old.mode}, ${k.lookup}, ${k.hash}, ${k.last4}, ${old.scopes}) RETURNING id`;
    // The old key keeps working until the grace period ends (or its own expiry, if sooner).
    const [u] = await tx`
      UPDATE api_keys SET replaced_by = ${n!.id},
        expires_at = LEAST(COALESCE(expires_at, 'infinity'::timestamptz), now() + make_interval(secs => ${graceS}))
      WHERE id = ${keyId} RETURNING expires_at`;
    return { id: n!.id as string, key: k.key, old_key_valid_until: (u!.expires_at as Date).toISOString() };
  }) as Promise<{ id: string; key: string; old_key_valid_until: string }>;
}
