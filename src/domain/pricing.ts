// Plans, prices and limits of the API contract (docs/api.md), defined once and served by
// GET /pricing, GET /account and enforced by the rate limiter, the job limits and billing.

export const apiVersion = "2026-09-01";

export const plans = {
  starter: {
    name: "API starter",
    price_eur_per_month: 19,
    vat_included: true,
    included_credits_per_month: 2000,
    live_access: true,
  },
  free: {
    name: "Free",
    price_eur_per_month: 0,
    vat_included: true,
    included_credits_per_month: 0,
    live_access: false,
  },
} as const;
export type PlanName = keyof typeof plans;

export const overage = {
  eur_per_credit: 0.015,
  eur_per_ocr_page: 0.045,
} as const;

/**
 * Per-mode limits. `pages_per_job` for live is this service's choice (the contract names a
 * plan's cap without a value): 1,000 pages.
 */
export const limits = {
  live: { requests_per_minute: 60, concurrent_jobs: 2, pages_per_job: 1000 },
  test: { requests_per_minute: 30, concurrent_jobs: 2, pages_per_job: 100 },
} as const;

/** The pages a job may have: the account's own limit when an operator set one (admin CLI
 * `account:set --pages-per-job`, for both modes), else the mode's. */
export function pagesPerJob(mode: keyof typeof limits, accountLimit: number | null): number {
  return accountLimit ?? limits[mode].pages_per_job;
}

export const otherLimits = {
  webhook_endpoints_per_mode: 10,
  webhook_url_max_chars: 2048,
  webhook_description_max_chars: 255,
  metadata_max_keys: 20,
  file_ids_max_items: 50,
  merge_min_files: 2,
  merge_max_files: 50,
  idempotency_key_max_chars: 255,
  idempotency_retention_hours: 24,
  list_limit_min: 1,
  list_limit_max: 100,
  list_limit_default: 20,
  webhook_timeout_seconds: 10,
  webhook_attempts: 6,
  webhook_disable_after_consecutive_failures: 30,
  webhook_signature_tolerance_seconds: 300,
} as const;
