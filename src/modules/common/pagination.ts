// The list envelope and cursor of every list route (the contract leaves it open; this service's
// choice, documented in docs/api.md): newest first, `starting_after` = the id of the last object already seen,
// one extra row fetched to tell `has_more`.
import type { AuthenticatedKey } from "../../auth/authenticate";
import { db } from "../../db/client";
import { assertOwned } from "./ownership";

export interface Cursor {
  id: string;
  created_at: Date;
}

/** The row `starting_after` names, which must be the caller's, of the caller's mode. */
export async function cursorRow(
  table: "files" | "jobs",
  id: string | undefined,
  auth: AuthenticatedKey,
  what: string,
): Promise<Cursor | undefined> {
  if (!id) return undefined;
  const [row] = await db()`SELECT id, created_at, account_id, mode FROM ${db()(table)} WHERE id = ${id}`;
  return assertOwned(row as (Cursor & { account_id: string; mode: string }) | undefined, auth, what, "starting_after");
}

/** Rows were fetched with LIMIT limit + 1; the extra one only says that more exist. */
export function listPage<R, T>(rows: readonly R[], limit: number, present: (row: R) => T) {
  return { object: "list" as const, data: rows.slice(0, limit).map(present), has_more: rows.length > limit };
}
