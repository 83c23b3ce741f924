-- 0016: a generation number per cloud that every change to what derive serve delivers moves on
-- (issue 39): an asset overwritten, renamed or deleted, a derivative replaced or deleted.
-- Each serve process keeps the responses it delivers most in memory and drops them when the
-- number moves, so an overwrite or delete made by any process is seen by all. Triggers keep it,
-- so no writer, present or future, can forget to.
CREATE TABLE derive.served_asset_generation (
    cloud      text   PRIMARY KEY,
    generation bigint NOT NULL
);

CREATE FUNCTION derive.served_asset_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO derive.served_asset_generation (cloud, generation) VALUES (OLD.cloud, 1)
    ON CONFLICT (cloud) DO UPDATE SET generation = derive.served_asset_generation.generation + 1;
    RETURN NULL;
END;
$$;

CREATE TRIGGER served_assets_changed AFTER UPDATE OR DELETE ON derive.served_assets
    FOR EACH ROW EXECUTE FUNCTION derive.served_asset_changed();
CREATE TRIGGER served_derivatives_changed AFTER UPDATE OR DELETE ON derive.served_derivatives
    FOR EACH ROW EXECUTE FUNCTION derive.served_asset_changed();

-- Every role that changes served assets moves the number on (the trigger runs as its caller).
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.served_asset_generation TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE ON derive.served_asset_generation TO derive_worker;
    END IF;
END $$;
