-- 0003: live workers, so `derive status` can show who is running what.
--
-- Each `derive work` process upserts its row every few seconds (the lease owner name its runs
-- carry, its host, queues and slots, and what it is doing) and deletes it when it stops. Rows
-- not refreshed for an hour are removed by any worker.

CREATE TABLE derive.workers (
    id         text        PRIMARY KEY,
    host       text        NOT NULL,
    pid        integer     NOT NULL,
    queues     text[]      NOT NULL,
    slots      integer     NOT NULL,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL DEFAULT now(),
    -- {"running": [{"id", "stage", "since"}], "finished": {"completed": n, ...}, "stopping": bool}
    activity   jsonb       NOT NULL DEFAULT '{}'
);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.workers TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.workers TO derive_worker;
    END IF;
END $$;
