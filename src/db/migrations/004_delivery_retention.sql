-- The sweeper deletes finished delivery attempts after DELIVERY_LOG_RETENTION_DAYS
-- (src/storage/sweeper.ts); this index keeps that a range scan instead of a full scan of
-- the log on every sweep.
CREATE INDEX webhook_deliveries_finished_age ON webhook_deliveries (created_at) WHERE status IN ('succeeded', 'failed');
