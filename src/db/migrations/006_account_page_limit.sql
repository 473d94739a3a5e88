-- An operator's per-account page limit per job (admin CLI `account:set --pages-per-job`), for
-- customers whose documents run past the plan's limits (src/domain/pricing.ts `limits`): NULL
-- keeps the mode's limit; a value replaces it in both modes.
ALTER TABLE accounts ADD COLUMN pages_per_job integer CHECK (pages_per_job IS NULL OR pages_per_job > 0);
