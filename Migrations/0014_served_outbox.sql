-- derive serve's notifications to send, kept until sent or given up (state 'done'), so one
-- pending when serve stops is sent by the next serve process. A claim moves next_at on by a
-- lease (FOR UPDATE SKIP LOCKED: two claimers never take one row). The API key's name is
-- kept, never its secret; an eager notification waits for job_id and is made when it ends.
CREATE TABLE derive.served_outbox (
    id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    cloud      text        NOT NULL,
    public_id  text        NOT NULL,
    url        text        NOT NULL,
    type       text        NOT NULL CHECK (type IN ('upload', 'eager')),
    key_name   text        NOT NULL,
    body       text,
    job_id     bigint,
    base       text,
    attempts   integer     NOT NULL DEFAULT 0,
    next_at    timestamptz NOT NULL DEFAULT now(),
    state      text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX served_outbox_due ON derive.served_outbox (next_at, id) WHERE state = 'pending';

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_submitter') THEN
        GRANT SELECT ON derive.served_outbox TO derive_submitter;
    END IF;
    IF EXISTS (SELECT FROM pg_roles WHERE rolname = 'derive_worker') THEN
        GRANT SELECT, INSERT, UPDATE, DELETE ON derive.served_outbox TO derive_worker;
    END IF;
END $$;
