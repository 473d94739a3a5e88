// The credit ledger (append-only): reserve at accept, then either settle (release the hold and
// charge the pages actually processed) or release. Each call takes the transaction of the
// job's state change, so billing and state never disagree.
import type { Queryable } from "../db/client";
import { ApiError } from "../domain/errors";
import { overage, plans, type PlanName } from "../domain/pricing";

export function currentPeriod(at = new Date()): string {
  return at.toISOString().slice(0, 7);
}

export function periodBounds(period: string): { start: string; end: string } {
  const [y, m] = period.split("-").map(Number) as [number, number];
  return { start: new Date(Date.UTC(y, m - 1, 1)).toISOString(), end: new Date(Date.UTC(y, m, 1)).toISOString() };
}

export interface PeriodUsage {
  charged: number;
  reservedInFlight: number;
  pagesInFlight: number;
}

export async function periodUsage(tx: Queryable, accountId: string, period = currentPeriod()): Promise<PeriodUsage> {
  const [r] = await tx`
    SELECT
      COALESCE(SUM(credits) FILTER (WHERE entry = 'charge'), 0)::int AS charged,
      (COALESCE(SUM(credits) FILTER (WHERE entry = 'reserve'), 0) - COALESCE(SUM(credits) FILTER (WHERE entry = 'release'), 0))::int AS in_flight,
      (COALESCE(SUM(pages) FILTER (WHERE entry = 'reserve'), 0) - COALESCE(SUM(pages) FILTER (WHERE entry = 'release'), 0))::int AS pages_in_flight
    FROM credit_ledger WHERE account_id = ${accountId} AND period = ${period}`;
  return { charged: r!.charged, reservedInFlight: r!.in_flight, pagesInFlight: r!.pages_in_flight };
}

/** Overage amount in EUR for a number of credits beyond the included ones (OCR pages are 3 credits = 0.045 EUR). */
export function overageEur(credits: number): number {
  return Math.round(credits * overage.eur_per_credit * 10000) / 10000;
}

/**
 * Checks that `credits` more can be committed, then writes the reservation. Called with the
 * account row locked (FOR UPDATE) so concurrent jobs cannot both take the last credits.
 * A spending cap of 0 means "no overage": then the error is insufficient_credits.
 */
export async function reserveCredits(
  tx: Queryable,
  account: { id: string; plan: PlanName; spendingCapEur: number | null },
  jobId: string,
  operation: string,
  credits: number,
  pages: number,
): Promise<void> {
  const period = currentPeriod();
  const usage = await periodUsage(tx, account.id, period);
  const included = plans[account.plan].included_credits_per_month;
  const committed = usage.charged + usage.reservedInFlight;
  const remainingIncluded = Math.max(0, included - committed);
  if (credits > remainingIncluded) {
    const overageAfter = Math.max(0, committed + credits - included);
    const cap = account.spendingCapEur;
    if (cap !== null && cap <= 0) {
      throw new ApiError(
        "insufficient_credits",
        `This job needs ${credits} credits but only ${remainingIncluded} included credits remain, and overage is disabled (spending cap 0).`,
        null,
        { pages, remaining: remainingIncluded },
      );
    }
    if (cap !== null && overageEur(overageAfter) > cap) {
      const affordable = Math.max(0, Math.floor(cap / overage.eur_per_credit) - Math.max(0, committed - included));
      throw new ApiError(
        "spending_cap_reached",
        `This job would bring overage to ${overageEur(overageAfter).toFixed(3)} EUR, past the spending cap of ${cap} EUR.`,
        null,
        { pages, remaining: remainingIncluded + affordable },
      );
    }
  }
  await tx`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
           VALUES (${account.id}, ${jobId}, 'reserve', ${credits}, ${pages}, ${operation}, ${period})`;
}

/** Releases a job's reservation (failure, cancel) — idempotent per job. */
export async function releaseCredits(tx: Queryable, jobId: string): Promise<void> {
  await tx`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
           SELECT account_id, job_id, 'release', credits, pages, operation, period
             FROM credit_ledger WHERE job_id = ${jobId} AND entry = 'reserve'
           ON CONFLICT (job_id, entry) WHERE job_id IS NOT NULL DO NOTHING`;
}

/** Success: release the hold and charge the pages actually processed — idempotent per job. */
export async function settleCredits(
  tx: Queryable,
  jobId: string,
  pagesProcessed: number,
  creditsPerPage: number,
): Promise<void> {
  await releaseCredits(tx, jobId);
  await tx`INSERT INTO credit_ledger (account_id, job_id, entry, credits, pages, operation, period)
           SELECT account_id, job_id, 'charge', ${pagesProcessed * creditsPerPage}, ${pagesProcessed}, operation, period
             FROM credit_ledger WHERE job_id = ${jobId} AND entry = 'reserve'
           ON CONFLICT (job_id, entry) WHERE job_id IS NOT NULL DO NOTHING`;
}
