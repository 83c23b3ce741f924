-- 0012: what `derive serve` keeps of the assets uploaded through Cloudinary's API (the
-- ServedAssets seam): one row per public id, one per derivative, one per notification sent.
-- Rows rather than a document per asset, so two processes recording derivatives of one asset
-- at once each add their own. An upload's row and its eager job are written in one
-- transaction. `faces` are not kept here: they are the `assets` row's of the original's SHA-256.
CREATE TABLE derive.served_assets (
    cloud           text        NOT NULL,
    public_id       text        NOT NULL,
    -- Seconds since 1970 at the upload; an overwrite takes one above the replaced version.
    version         bigint      NOT NULL,
    format          text        NOT NULL,
    bytes           bigint      NOT NULL,
    width           integer     NOT NULL,
    height          integer     NOT NULL,
    tags            jsonb       NOT NULL DEFAULT '[]',
    context         jsonb       NOT NULL DEFAULT '{}',
    original_key    text        NOT NULL,
    original_sha256 text        NOT NULL,
    -- The eager jobs of this version: [{"job_id": 7, "outputs": [{"transformation", "format", "identity"}]}].
    eager           jsonb       NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cloud, public_id)
);
CREATE INDEX served_assets_original ON derive.served_assets (original_sha256);

CREATE TABLE derive.served_derivatives (
    cloud          text        NOT NULL,
    public_id      text        NOT NULL,
    -- The version of the asset it was made from (an overwrite deletes the older ones).
    version        bigint      NOT NULL,
    -- SHA-256 of the output's canonical form: two spellings of one transformation are one row.
    identity       text        NOT NULL,
    transformation text        NOT NULL,
    format         text        NOT NULL,
    storage_key    text        NOT NULL,
    width          integer     NOT NULL,
    height         integer     NOT NULL,
    bytes          bigint      NOT NULL,
    sha256         text        NOT NULL,
    job_id         bigint      NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cloud, public_id, identity),
    FOREIGN KEY (cloud, public_id) REFERENCES derive.served_assets (cloud, public_id) ON DELETE CASCADE
);

CREATE TABLE derive.served_notifications (
    id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cloud     text        NOT NULL,
    public_id text        NOT NULL,
    -- The target with its credentials and query redacted.
    url       text        NOT NULL,
    type      text        NOT NULL,
    status    integer,
    attempts  integer     NOT NULL,
    error     text,
    sent_at   timestamptz NOT NULL
);
CREATE INDEX served_notifications_asset ON derive.served_notifications (cloud, public_id, id);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.served_assets, derive.served_derivatives, derive.served_notifications TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.served_assets, derive.served_derivatives, derive.served_notifications TO derive_worker;
    END IF;
END $$;
