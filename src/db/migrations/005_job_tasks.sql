-- Page-parallel jobs (docs/scaling.md, "Page-parallel jobs"): a job over a page-separable
-- operation with more pages than one task is split, when a worker claims it, into page-range
-- tasks that any worker claims. Meanwhile the job stays `running` with no worker and no lease
-- (the reaper leaves it alone; its tasks have leases of their own); the worker that finishes
-- the last task takes the job again (worker_id, lease) and assembles its result.
ALTER TABLE jobs ADD COLUMN tasks_total integer;                 -- NULL: run whole on one worker
ALTER TABLE jobs ADD COLUMN tasks_done integer NOT NULL DEFAULT 0;

CREATE TABLE job_tasks (
  job_id           uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
  seq              integer NOT NULL,          -- 0-based, in page order: the order of assembly
  operation        text NOT NULL,             -- the job's (for /metrics without a join)
  pages            integer[] NOT NULL,        -- 0-based indexes of the pages this task reads
  status           text NOT NULL DEFAULT 'queued'
                   CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL DEFAULT 2,
  worker_id        text,
  lease_expires_at timestamptz,
  pages_done       integer NOT NULL DEFAULT 0, -- progress of the running attempt
  pages_processed  integer,                    -- billed pages of the attempt that finished
  partial_key      text,                       -- its partial result in the blob store
  summary          jsonb,                      -- facts of that partial the assembly needs (ocr: pages kept as they were)
  job_created_at   timestamptz NOT NULL,       -- claims take the tasks of older jobs first
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  finished_at      timestamptz,
  PRIMARY KEY (job_id, seq)
);
CREATE INDEX job_tasks_queue ON job_tasks (job_created_at, job_id, seq) WHERE status = 'queued';
CREATE INDEX job_tasks_running_lease ON job_tasks (lease_expires_at) WHERE status = 'running';
CREATE INDEX job_tasks_partials ON job_tasks (job_id) WHERE partial_key IS NOT NULL;
CREATE INDEX job_tasks_finished ON job_tasks (finished_at) WHERE status = 'done';

-- Worker processes seen lately: each upserts its row on a timer and deletes it when it stops.
-- Task sizing counts the rows seen within a lease (docs/scaling.md).
CREATE TABLE workers (
  id      text PRIMARY KEY,
  seen_at timestamptz NOT NULL DEFAULT now()
);
