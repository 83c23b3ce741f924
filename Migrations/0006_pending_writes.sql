-- 0006: the write ledger. A run notes the keys it is about to write to a store before it
-- writes them; recording the job's outputs forgets the notes of the keys recorded. A note
-- that stays names an object written by a run that died (or failed) between writing and
-- recording: usually a retry writes the same key again, but when the source changed in
-- between, the retry writes other keys and nothing would ever refer to the first ones. The
-- sweep (workers, `derive prune`) deletes such an object once its job has finished and no
-- derivative row and no unfinished job names the key.
CREATE TABLE derive.pending_writes (
    store       text        NOT NULL,
    storage_key text        NOT NULL,
    job_id      bigint      NOT NULL,
    noted_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (store, storage_key, job_id)
);
CREATE INDEX pending_writes_job ON derive.pending_writes (job_id);
CREATE INDEX pending_writes_noted_at ON derive.pending_writes (noted_at);
CREATE INDEX derivatives_storage_key ON derive.derivatives (storage_key);

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.pending_writes TO derive_worker;
    END IF;
END $$;
