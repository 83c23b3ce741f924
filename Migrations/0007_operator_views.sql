-- 0007: what the operator's views read. Finished jobs are listed newest first by keyset
-- (finished_at, id), narrowed by outcome, queue, the code of the last error or the source's
-- host; each narrowing has an index that yields rows in that order, so a page reads about as
-- many archive rows as it shows, however large the archive.

-- The host of a source URL, lower-cased (an S3 source's bucket); NULL for paths, file URLs
-- and data URIs. Immutable, so an index can hold it.
CREATE FUNCTION derive.source_host(source text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT
RETURN nullif(lower(substring(source from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^@/?#]*@)?(\[[^]]*\]|[^:/?#]*)')), '');

CREATE INDEX job_archive_keyset ON derive.job_archive (finished_at, id);
-- (finished_at, id) serves retention's deletes by age too.
DROP INDEX derive.job_archive_finished_at;
CREATE INDEX job_archive_outcome ON derive.job_archive (outcome, finished_at, id);
CREATE INDEX job_archive_queue ON derive.job_archive (queue, finished_at, id);
CREATE INDEX job_archive_error_code ON derive.job_archive ((errors -> -1 ->> 'code'), finished_at, id);
CREATE INDEX job_archive_source_host ON derive.job_archive (derive.source_host(payload ->> 'source'), finished_at, id);

REVOKE EXECUTE ON FUNCTION derive.source_host(text) FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT EXECUTE ON FUNCTION derive.source_host(text) TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT EXECUTE ON FUNCTION derive.source_host(text) TO derive_worker;
    END IF;
END $$;
