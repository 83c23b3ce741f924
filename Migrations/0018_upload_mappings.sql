-- 0018: Cloudinary's upload mappings (issue 39): a folder mapped to a URL prefix, so that the
-- first delivery of <folder>/<path> that derive serve has not recorded fetches <prefix><path>
-- and records it as an upload. Set through the Admin API's upload_mappings calls.
CREATE TABLE derive.upload_mappings (
    cloud      text        NOT NULL,
    folder     text        NOT NULL,
    template   text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (cloud, folder)
);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.upload_mappings TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.upload_mappings TO derive_worker;
    END IF;
END $$;
