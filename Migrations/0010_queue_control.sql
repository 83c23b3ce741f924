-- 0010: queue control. An operator pauses a queue (`derive queue pause NAME`, the dashboard's
-- Pause button) to stop work on it without stopping the workers, which go on with their
-- other queues: while its name is in derive.paused_queues no claim takes from it, on any
-- machine, because the claim function itself skips it. It keeps accepting jobs, and runs
-- already claimed finish (and a run put back, released or rescued, waits with the rest).
-- Resuming deletes the row. Pausing twice keeps the first pause (ON CONFLICT DO NOTHING).
CREATE TABLE derive.paused_queues (
    queue     text        PRIMARY KEY CHECK (queue ~ '^[A-Za-z0-9_.-]{1,64}$'),
    paused_at timestamptz NOT NULL DEFAULT now(),
    paused_by text        NOT NULL CHECK (length(paused_by) <= 200)
);

-- The file names uploaded originals were stored from. An upload is stored by its content
-- (originals/<sha256>.jpg) and its job names that key, so the name the operator knows it by
-- (IMG_0412.jpg) is kept here, by the source the job names, for the dashboard's search and
-- the job's page. By source, not by job: a retry names the same source and finds the name,
-- and the archive's rows do not have to carry it. One content uploaded under two names has both.
CREATE TABLE derive.original_names (
    source    text        NOT NULL,
    name      text        NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
    noted_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, name)
);

-- derive.claim as 0001 wrote it, but a queue in derive.paused_queues yields no rows: its
-- segments' scans are not run (the filter is a constant per queue, so the planner keeps the
-- ordered index scans of the others).
CREATE OR REPLACE FUNCTION derive.claim(queues text[], max_jobs integer, owner text, lease_seconds double precision, segments jsonb)
RETURNS TABLE (id bigint, attempt integer, queue text, priority integer, max_attempts integer, payload jsonb,
               lease_expires_at double precision, created_at double precision, run_at double precision, run_at_micros bigint)
LANGUAGE plpgsql SET enable_seqscan = off SET enable_bitmapscan = off SET jit = off AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    WITH segment AS MATERIALIZED (
        SELECT * FROM jsonb_to_recordset(claim.segments)
            AS s(ord integer, queue text, lo integer, hi integer, after_run_at bigint, after_id bigint)
    ), picked AS (
        SELECT c.id FROM unnest(claim.queues::text[]) AS q(name)
        -- A paused queue is not read at all.
        CROSS JOIN LATERAL (SELECT NOT EXISTS (SELECT FROM derive.paused_queues p WHERE p.queue = q.name) AS running) AS r
        CROSS JOIN LATERAL (
            SELECT k.id, k.priority, k.run_at
            FROM (SELECT * FROM segment WHERE segment.queue = q.name ORDER BY segment.ord) AS s
            CROSS JOIN LATERAL (
                SELECT * FROM (
                    SELECT j.id, j.priority, j.run_at FROM derive.jobs j
                    WHERE r.running AND s.after_id IS NOT NULL AND j.state = 'available' AND j.queue = q.name AND j.priority = s.hi
                      AND (j.run_at, j.id) > (timestamptz 'epoch' + s.after_run_at * interval '1 microsecond', s.after_id)
                    ORDER BY j.run_at, j.id
                    LIMIT claim.max_jobs
                    FOR UPDATE SKIP LOCKED
                ) AS after_position
                UNION ALL
                SELECT * FROM (
                    SELECT j.id, j.priority, j.run_at FROM derive.jobs j
                    WHERE r.running AND s.after_id IS NULL AND j.state = 'available' AND j.queue = q.name AND j.priority BETWEEN s.lo AND s.hi
                    ORDER BY j.priority DESC, j.run_at, j.id
                    LIMIT claim.max_jobs
                    FOR UPDATE SKIP LOCKED
                ) AS from_start
            ) AS k
            LIMIT claim.max_jobs
        ) AS c
        ORDER BY c.priority DESC, c.run_at, c.id
        LIMIT claim.max_jobs
    ), claimed AS (
        UPDATE derive.jobs j
        SET state = 'running', attempt = j.attempt + 1, lease_owner = claim.owner,
            lease_expires_at = now() + make_interval(secs => claim.lease_seconds), started_at = now()
        FROM picked WHERE j.id = picked.id
        RETURNING j.id, j.attempt, j.queue, j.priority, j.max_attempts, j.payload, j.lease_expires_at, j.created_at, j.run_at
    )
    SELECT c.id, c.attempt, c.queue, c.priority, c.max_attempts, c.payload,
           extract(epoch FROM c.lease_expires_at)::double precision, extract(epoch FROM c.created_at)::double precision,
           extract(epoch FROM c.run_at)::double precision, (extract(epoch FROM c.run_at) * 1000000)::bigint
    FROM claimed c;
END $$;

-- CREATE OR REPLACE keeps the function's privileges. The worker's claim reads the table;
-- pausing and resuming are the worker role's too (an operator's tools run as it), and a
-- submitter may see which queues are paused.
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.paused_queues TO derive_submitter;
        -- An application that uploads may name its originals as derive upload does.
        GRANT SELECT, INSERT ON derive.original_names TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, DELETE ON derive.paused_queues TO derive_worker;
        GRANT SELECT, INSERT, DELETE ON derive.original_names TO derive_worker;
    END IF;
END $$;
