-- 0004: schedules, the sources behind assets, and superseded outputs.
--
-- derive.schedules holds what to enqueue on a cron timetable; derive.schedule_fires records
-- each fire once, in the transaction that enqueues its job, so any number of workers can run
-- the scheduler and a fire happens exactly once. derive.sources maps each source URL to the
-- asset it last held, with the validators to ask the origin whether it changed.

CREATE TABLE derive.schedules (
    name       text        PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$'),
    cron       text        NOT NULL,
    timezone   text        NOT NULL DEFAULT 'UTC',
    -- {"task": "reprocess", "preset": ..., "filter": {...}, ...} or {"task": "revalidate", "filter": {...}}
    action     jsonb       NOT NULL,
    enabled    boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE derive.schedule_fires (
    schedule  text        NOT NULL REFERENCES derive.schedules (name) ON DELETE CASCADE,
    fire_time timestamptz NOT NULL,
    fired_at  timestamptz NOT NULL DEFAULT now(),
    job_id    bigint,
    PRIMARY KEY (schedule, fire_time)
);

CREATE TABLE derive.sources (
    id           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
    url          text        PRIMARY KEY,
    asset_id     bigint      NOT NULL REFERENCES derive.assets (id) ON DELETE CASCADE,
    -- Counts the contents seen at this URL: 1 for the first, +1 whenever it changes.
    version      integer     NOT NULL DEFAULT 1,
    etag         text,
    last_modified text,
    checked_at   timestamptz NOT NULL DEFAULT now(),
    changed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sources_asset ON derive.sources (asset_id);
CREATE INDEX sources_checked_at ON derive.sources (checked_at);

-- A derivative replaced by a newer version's output is marked (or, by policy, deleted).
ALTER TABLE derive.derivatives ADD COLUMN superseded_at timestamptz;
CREATE INDEX derivatives_preset ON derive.derivatives (preset_name, asset_id) WHERE superseded_at IS NULL;
CREATE INDEX derivatives_superseded ON derive.derivatives (superseded_at) WHERE superseded_at IS NOT NULL;
CREATE INDEX assets_created_at ON derive.assets (created_at);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.schedules, derive.schedule_fires, derive.sources TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.schedules, derive.schedule_fires, derive.sources TO derive_worker;
    END IF;
END $$;
