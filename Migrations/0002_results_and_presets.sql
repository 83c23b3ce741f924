-- 0002: results (one asset row per source content, one derivative row per output) and named,
-- versioned presets.

CREATE TABLE derive.assets (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sha256          text        NOT NULL UNIQUE,
    source_url      text        NOT NULL,
    bytes           bigint      NOT NULL,
    format          text        NOT NULL,
    width           integer     NOT NULL,
    height          integer     NOT NULL,
    pages           integer     NOT NULL,
    has_alpha       boolean     NOT NULL,
    orientation     integer     NOT NULL,
    colour_space    text,
    icc_description text,
    exif            jsonb       NOT NULL DEFAULT '{}',
    has_location    boolean     NOT NULL DEFAULT false,
    perceptual_hash text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX assets_source_url ON derive.assets (source_url);

CREATE TABLE derive.derivatives (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    asset_id         bigint      NOT NULL REFERENCES derive.assets (id) ON DELETE CASCADE,
    job_id           bigint      NOT NULL,
    output_name      text        NOT NULL,
    breakpoint_width integer,
    chain            jsonb       NOT NULL,
    chain_hash       text        NOT NULL,
    preset_name      text,
    preset_version   integer,
    storage_key      text        NOT NULL,
    url              text        NOT NULL,
    format           text        NOT NULL,
    width            integer     NOT NULL,
    height           integer     NOT NULL,
    bytes            bigint      NOT NULL,
    sha256           text        NOT NULL,
    quality          integer,
    frames           integer     NOT NULL DEFAULT 1,
    has_alpha        boolean     NOT NULL DEFAULT false,
    blurhash         text,
    dominant_color   text,
    timings          jsonb       NOT NULL DEFAULT '{}',
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- The same work lands on the same key: a retried job updates its row, never duplicates it.
    UNIQUE (asset_id, storage_key)
);
CREATE INDEX derivatives_job ON derive.derivatives (job_id);
CREATE INDEX derivatives_chain_hash ON derive.derivatives (chain_hash);

CREATE TABLE derive.presets (
    name       text        NOT NULL CHECK (name ~ '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$'),
    version    integer     NOT NULL CHECK (version >= 1),
    outputs    jsonb       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    retired_at timestamptz,
    PRIMARY KEY (name, version)
);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.assets, derive.derivatives, derive.presets TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.assets, derive.derivatives, derive.presets TO derive_worker;
    END IF;
END $$;
