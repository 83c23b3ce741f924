-- 0013: a finished job keeps the worker that ran it, and the operator's views read what it
-- did. The archive had the start of the last attempt (started_at) but not its worker: the
-- lease's owner was dropped with the live row, so a job's page could name its worker only
-- while it ran, and no view could count what each worker finished. The archive now takes
-- the lease's owner as worker (NULL for a job cancelled while waiting).
ALTER TABLE derive.job_archive ADD COLUMN worker text;

-- Totals per queue and per worker in time buckets (the dashboard's totals page) read only
-- this index over the window asked for.
CREATE INDEX job_archive_totals ON derive.job_archive (finished_at) INCLUDE (queue, worker, outcome);

-- A job's page lists the generations of its work (a retry of job N carries 'retry:N'):
-- live jobs have jobs_dedupe, the archive this.
CREATE INDEX job_archive_dedupe ON derive.job_archive (dedupe_key, id) WHERE dedupe_key IS NOT NULL;
