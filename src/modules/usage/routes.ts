// GET /usage: the current period's included, used and remaining credits, overage, pages in
// flight and the recent ledger, all derived from the append-only credit ledger.
import { Type as T } from "@sinclair/typebox";
import { route } from "../common/route";
import { db } from "../../db/client";
import { currentPeriod, overageEur, periodBounds, periodUsage } from "../../billing/credits";
import { plans } from "../../domain/pricing";

/** The billing period a usage response covers; GET /usage/daily's too. */
export const UsagePeriod = T.Object({
  id: T.String(),
  start: T.String({ format: "date-time" }),
  end: T.String({ format: "date-time" }),
});

const Usage = T.Object({
  object: T.Literal("usage"),
  livemode: T.Boolean(),
  billed: T.Boolean(),
  period: UsagePeriod,
  included_credits: T.Integer(),
  used_credits: T.Integer(),
  remaining_credits: T.Integer(),
  reserved_credits: T.Integer(),
  overage_credits: T.Integer(),
  overage_pages: T.Integer(),
  overage_amount_eur: T.Number(),
  pages_in_flight: T.Integer(),
  spending_cap_eur: T.Union([T.Number(), T.Null()]),
  ledger: T.Array(
    T.Object({
      id: T.Integer(),
      job_id: T.Union([T.String(), T.Null()]),
      entry: T.String(),
      credits: T.Integer(),
      pages: T.Integer(),
      operation: T.String(),
      created_at: T.String({ format: "date-time" }),
    }),
  ),
});

export const getUsage = route({
  method: "GET",
  path: "/usage",
  operationId: "getUsage",
  summary: "Credits, overage and the recent ledger for the current period",
  description:
    "Live mode only bills; with a sandbox key every figure is zero and `billed` is false. The period is the calendar month in UTC.",
  tag: "Account",
  scope: "usage:read",
  responses: { 200: { description: "Usage.", schema: Usage } },
  errors: [],
  handler: async ({ auth }) => {
    const period = currentPeriod();
    const included = plans[auth.account.plan].included_credits_per_month;
    const live = auth.mode === "live";
    const usage = live
      ? await periodUsage(db(), auth.account.id, period)
      : { charged: 0, reservedInFlight: 0, pagesInFlight: 0 };
    const entries = live
      ? await db()`SELECT id, job_id, entry, credits, pages, operation, created_at FROM credit_ledger
                   WHERE account_id = ${auth.account.id} AND period = ${period} ORDER BY id DESC LIMIT 50`
      : [];
    // Overage pages: walk the period's charges in order; the part past the included credits is overage.
    let cumulative = 0;
    let overagePages = 0;
    if (live) {
      const charges =
        await db()`SELECT credits, pages FROM credit_ledger WHERE account_id = ${auth.account.id} AND period = ${period} AND entry = 'charge' ORDER BY id`;
      for (const c of charges) {
        const before = cumulative;
        cumulative += c.credits;
        const over = Math.max(0, cumulative - Math.max(included, before));
        if (over > 0 && c.credits > 0) overagePages += Math.ceil((over / c.credits) * c.pages);
      }
    }
    const overageCredits = Math.max(0, usage.charged - included);
    return {
      status: 200,
      body: {
        object: "usage",
        livemode: live,
        billed: live,
        period: { id: period, ...periodBounds(period) },
        included_credits: live ? included : 0,
        used_credits: usage.charged,
        remaining_credits: live ? Math.max(0, included - usage.charged - usage.reservedInFlight) : 0,
        reserved_credits: usage.reservedInFlight,
        overage_credits: overageCredits,
        overage_pages: overagePages,
        overage_amount_eur: overageEur(overageCredits),
        pages_in_flight: usage.pagesInFlight,
        spending_cap_eur: auth.account.spendingCapEur,
        ledger: entries.map((e) => ({
          id: Number(e.id),
          job_id: e.job_id,
          entry: e.entry,
          credits: e.credits,
          pages: e.pages,
          operation: e.operation,
          created_at: (e.created_at as Date).toISOString(),
        })),
      },
    };
  },
});
