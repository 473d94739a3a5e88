// Loads an object of the caller's account and enforces mode partitioning: another account's
// object is indistinguishable from a missing one (404), the other mode's answers 403.
import type { AuthenticatedKey } from "../../auth/authenticate";
import { ApiError } from "../../domain/errors";

export function assertOwned<T extends { account_id: string; mode: string }>(
  row: T | undefined,
  auth: AuthenticatedKey,
  what: string,
  param: string | null = null,
): T {
  if (!row || row.account_id !== auth.account.id) throw new ApiError("not_found", `No such ${what}.`, param);
  if (row.mode !== auth.mode) {
    throw new ApiError(
      "mode_mismatch",
      `This ${what} belongs to ${row.mode === "live" ? "live" : "sandbox"} mode; use a ${row.mode === "live" ? "svk_live_" : "svk_test_"} key.`,
      param,
    );
  }
  return row;
}
