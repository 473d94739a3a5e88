// GET /usage/daily (extension): the current period's credits charged and pages processed per
// UTC day and operation, read-only, for the console's usage plot. GET /usage has totals only.
import { Type as T } from "@sinclair/typebox";
import { route } from "../common/route";
import { db } from "../../db/client";
import { currentPeriod, periodBounds } from "../../billing/credits";
import { succeededPerDay } from "../../queue/jobs";
import { UsagePeriod } from "./routes";

const DailyUsage = T.Object({
  object: T.Literal("usage_daily"),
  livemode: T.Boolean(),
  billed: T.Boolean(),
  period: UsagePeriod,
  data: T.Array(
    T.Object({
      date: T.String({ format: "date", description: "UTC day" }),
      operation: T.String(),
      credits: T.Integer({ description: "credits charged that day (settled jobs; always 0 in sandbox)" }),
      pages: T.Integer({ description: "pages processed by jobs that succeeded that day" }),
      jobs: T.Integer({ description: "jobs that succeeded that day" }),
    }),
    { description: "one row per day and operation with any activity, oldest first" },
  ),
});

export const getDailyUsage = route({
  method: "GET",
  path: "/usage/daily",
  operationId: "getDailyUsage",
  summary: "Credits and pages per day and operation, this period (extension)",
  description:
    "Extension, not in the spec. The period is the calendar month in UTC, as for GET /usage. `credits` comes from the credit ledger's charges (live mode only); `pages` and `jobs` count the key's mode's jobs that succeeded each day, so a sandbox key sees its activity although it is never billed.",
  tag: "Account",
  scope: "usage:read",
  extension: true,
  responses: { 200: { description: "Daily usage.", schema: DailyUsage } },
  errors: [],
  handler: async ({ auth }) => {
    const period = currentPeriod();
    const bounds = periodBounds(period);
    const live = auth.mode === "live";
    const sql = db();
    const charges = live
      ? await sql<
          { date: string; operation: string; credits: number }[]
        >`SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date, operation, SUM(credits)::int AS credits
                    FROM credit_ledger WHERE account_id = ${auth.account.id} AND period = ${period} AND entry = 'charge'
                   GROUP BY 1, 2`
      : [];
    const done = await succeededPerDay(auth.account.id, auth.mode, bounds);
    const rows = new Map<string, { date: string; operation: string; credits: number; pages: number; jobs: number }>();
    const at = (date: string, operation: string) => {
      const k = `${date} ${operation}`;
      if (!rows.has(k)) rows.set(k, { date, operation, credits: 0, pages: 0, jobs: 0 });
      return rows.get(k)!;
    };
    for (const c of charges) at(c.date, c.operation).credits += c.credits;
    for (const d of done) Object.assign(at(d.date, d.operation), { pages: d.pages, jobs: d.jobs });
    const data = [...rows.values()].sort(
      (a, b) => a.date.localeCompare(b.date) || a.operation.localeCompare(b.operation),
    );
    return {
      status: 200,
      body: { object: "usage_daily", livemode: live, billed: live, period: { id: period, ...bounds }, data },
    };
  },
});
