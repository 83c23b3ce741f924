-- 0009: retries deduplicated while live. derive.retry made a new live job from a failed or
-- cancelled one on every call, so retrying one job twice (a double click on "Retry all", a
-- script run twice) ran its work twice, and once a retry failed too, retrying every failure
-- of its code retried both it and the job it copied. Now a retry carries a dedupe key: the
-- archived job's own, else 'retry:<id>' of the job it retries; a retry that fails carries its
-- key into the archive, so every later generation of one piece of work shares the first one's
-- key. While a live job holds the key, retry returns that job's id, as submit does (the same
-- jobs_dedupe index and ON CONFLICT). A retry waiting out its backoff still runs now.
CREATE OR REPLACE FUNCTION derive.retry(job bigint) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER
SET search_path = derive, pg_temp AS $$
DECLARE
    job_id    bigint;
    retry_key text;
BEGIN
    UPDATE derive.jobs SET state = 'available', run_at = now() WHERE id = retry.job AND state = 'scheduled' RETURNING id INTO job_id;
    IF job_id IS NOT NULL THEN
        RETURN job_id;
    END IF;
    SELECT COALESCE(a.dedupe_key, 'retry:' || a.id) INTO retry_key FROM derive.job_archive a
    WHERE a.id = retry.job AND a.outcome IN ('failed', 'cancelled');
    IF retry_key IS NULL THEN
        RETURN NULL;
    END IF;
    FOR i IN 1..5 LOOP
        INSERT INTO derive.jobs (queue, priority, max_attempts, dedupe_key, payload)
        SELECT a.queue, a.priority, a.max_attempts, retry_key, a.payload FROM derive.job_archive a WHERE a.id = retry.job
        ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
        RETURNING id INTO job_id;
        IF job_id IS NOT NULL THEN
            RETURN job_id;
        END IF;
        SELECT j.id INTO job_id FROM derive.jobs j WHERE j.dedupe_key = retry_key;
        IF job_id IS NOT NULL THEN
            RETURN job_id;
        END IF;
        -- Pruned since it was read: nothing to retry.
        IF NOT EXISTS (SELECT FROM derive.job_archive a WHERE a.id = retry.job) THEN
            RETURN NULL;
        END IF;
        -- The live job with the key finished between the two statements: try again.
    END LOOP;
    RAISE EXCEPTION 'derive.retry could not enqueue job % again with dedupe key %', retry.job, retry_key;
END $$;

-- CREATE OR REPLACE keeps the function's privileges; stated again as 0001 grants them.
REVOKE EXECUTE ON FUNCTION derive.retry(bigint) FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT EXECUTE ON FUNCTION derive.retry(bigint) TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT EXECUTE ON FUNCTION derive.retry(bigint) TO derive_worker;
    END IF;
END $$;
