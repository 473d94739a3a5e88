// The permission checks that follow authentication, in the order a client can act on them:
// verify the email, then get the plan (live only), then the route's scope.
import { config } from "../config";
import type { Scope } from "../domain/scopes";
import { plans } from "../domain/pricing";
import { ApiError } from "../domain/errors";
import type { AuthenticatedKey } from "./authenticate";

export function authorize(auth: AuthenticatedKey, scope: Scope | "any"): void {
  if (!auth.account.emailVerified) {
    throw new ApiError("email_unverified", "Verify the account's email address before using the API.");
  }
  if (auth.mode === "live" && !plans[auth.account.plan].live_access) {
    throw new ApiError(
      "plan_required",
      "Live keys need the API starter plan. Sandbox (svk_test_) keys work on every plan.",
      null,
      {
        upgrade_url: `${config.baseUrl}/pricing`,
      },
    );
  }
  if (scope !== "any" && !auth.scopes.includes(scope)) {
    throw new ApiError("insufficient_scope", `This key lacks the scope \`${scope}\` that this route needs.`, scope);
  }
}
