-- 0011: the tags and context a job gives its asset (Cloudinary's tags and contextual
-- metadata), which conditions read (if_!sale!_in_tags, if_ctx:!productType!_eq_!shoes!).
--
-- tags: ["sale", "new"]; context: {"productType": "shoes"}. NULL until a job names them; a
-- later job that names none keeps them, one that names some replaces them.
ALTER TABLE derive.assets ADD COLUMN tags jsonb, ADD COLUMN context jsonb;

-- derive.submit takes them too: dropped and made again with two more parameters (a second
-- function beside it would make every call that leaves them out ambiguous).
DROP FUNCTION derive.submit(text, jsonb, text, integer, timestamptz, text, integer, text);
CREATE FUNCTION derive.submit(
    source       text,
    outputs      jsonb       DEFAULT NULL,
    preset       text        DEFAULT NULL,
    priority     integer     DEFAULT 0,
    run_at       timestamptz DEFAULT now(),
    queue        text        DEFAULT 'default',
    max_attempts integer     DEFAULT 5,
    dedupe_key   text        DEFAULT NULL,
    tags         text[]      DEFAULT NULL,
    context      jsonb       DEFAULT NULL
) RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = derive, pg_temp AS $$
#variable_conflict use_column
DECLARE
    job_id   bigint;
    document jsonb;
BEGIN
    IF (submit.outputs IS NULL) = (submit.preset IS NULL) THEN
        RAISE EXCEPTION 'derive.submit needs outputs or a preset, not both and not neither' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF submit.context IS NOT NULL AND jsonb_typeof(submit.context) <> 'object' THEN
        RAISE EXCEPTION 'derive.submit: context must be a JSON object of texts, such as {"productType": "shoes"}' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    document := jsonb_build_object('version', 1, 'source', submit.source)
        || CASE WHEN submit.outputs IS NULL THEN jsonb_build_object('preset', submit.preset)
                ELSE jsonb_build_object('outputs', submit.outputs) END
        || CASE WHEN submit.tags IS NULL OR cardinality(submit.tags) = 0 THEN '{}'::jsonb
                ELSE jsonb_build_object('tags', to_jsonb(submit.tags)) END
        || CASE WHEN submit.context IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('context', submit.context) END;
    FOR i IN 1..5 LOOP
        INSERT INTO derive.jobs (queue, priority, run_at, max_attempts, dedupe_key, payload)
        VALUES (submit.queue, submit.priority, submit.run_at, submit.max_attempts, submit.dedupe_key, document)
        ON CONFLICT (dedupe_key) WHERE dedupe_key IS NOT NULL DO NOTHING
        RETURNING id INTO job_id;
        IF job_id IS NOT NULL THEN
            RETURN job_id;
        END IF;
        SELECT j.id INTO job_id FROM derive.jobs j WHERE j.dedupe_key = submit.dedupe_key;
        IF job_id IS NOT NULL THEN
            RETURN job_id;
        END IF;
        -- The duplicate finished between the two statements: try again.
    END LOOP;
    RAISE EXCEPTION 'derive.submit could not enqueue job with dedupe key %', submit.dedupe_key;
END $$;

REVOKE EXECUTE ON FUNCTION derive.submit(text, jsonb, text, integer, timestamptz, text, integer, text, text[], jsonb) FROM PUBLIC;
DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT EXECUTE ON FUNCTION derive.submit(text, jsonb, text, integer, timestamptz, text, integer, text, text[], jsonb) TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT EXECUTE ON FUNCTION derive.submit(text, jsonb, text, integer, timestamptz, text, integer, text, text[], jsonb) TO derive_worker;
    END IF;
END $$;
