/// The embedded queue's schema: the same tables as the PostgreSQL migrations, in SQLite's
/// types (times are Unix seconds, JSON is text). Versioned by `PRAGMA user_version`; each
/// entry moves the file up one version, in a transaction.
enum SQLiteSchema {
    static let versions: [String] = [
        """
        CREATE TABLE jobs (
            id               INTEGER PRIMARY KEY AUTOINCREMENT,
            queue            TEXT    NOT NULL DEFAULT 'default'
                                     CHECK (length(queue) BETWEEN 1 AND 64 AND queue NOT GLOB '*[^A-Za-z0-9_.-]*'),
            state            TEXT    NOT NULL CHECK (state IN ('available', 'scheduled', 'running')),
            priority         INTEGER NOT NULL DEFAULT 0,
            run_at           REAL    NOT NULL,
            attempt          INTEGER NOT NULL DEFAULT 0,
            max_attempts     INTEGER NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 100),
            lease_owner      TEXT,
            lease_expires_at REAL,
            lease_losses     INTEGER NOT NULL DEFAULT 0,
            dedupe_key       TEXT,
            cancel_requested INTEGER NOT NULL DEFAULT 0,
            payload          TEXT    NOT NULL,
            errors           TEXT    NOT NULL DEFAULT '[]',
            created_at       REAL    NOT NULL,
            started_at       REAL
        );
        CREATE INDEX jobs_claim ON jobs (queue, priority DESC, run_at, id) WHERE state = 'available';
        CREATE INDEX jobs_scheduled ON jobs (run_at) WHERE state = 'scheduled';
        CREATE INDEX jobs_leases ON jobs (lease_expires_at) WHERE state = 'running';
        CREATE UNIQUE INDEX jobs_dedupe ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL;

        CREATE TABLE job_archive (
            id           INTEGER PRIMARY KEY,
            queue        TEXT    NOT NULL,
            outcome      TEXT    NOT NULL CHECK (outcome IN ('completed', 'failed', 'cancelled')),
            priority     INTEGER NOT NULL,
            attempt      INTEGER NOT NULL,
            max_attempts INTEGER NOT NULL,
            dedupe_key   TEXT,
            payload      TEXT    NOT NULL,
            errors       TEXT    NOT NULL,
            result       TEXT,
            created_at   REAL    NOT NULL,
            started_at   REAL,
            finished_at  REAL    NOT NULL
        );
        CREATE INDEX job_archive_finished_at ON job_archive (finished_at);

        CREATE TABLE assets (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            sha256          TEXT    NOT NULL UNIQUE,
            source_url      TEXT    NOT NULL,
            bytes           INTEGER NOT NULL,
            format          TEXT    NOT NULL,
            width           INTEGER NOT NULL,
            height          INTEGER NOT NULL,
            pages           INTEGER NOT NULL,
            has_alpha       INTEGER NOT NULL,
            orientation     INTEGER NOT NULL,
            colour_space    TEXT,
            icc_description TEXT,
            exif            TEXT    NOT NULL DEFAULT '{}',
            has_location    INTEGER NOT NULL DEFAULT 0,
            perceptual_hash TEXT,
            created_at      REAL    NOT NULL,
            updated_at      REAL    NOT NULL
        );
        CREATE INDEX assets_source_url ON assets (source_url);

        CREATE TABLE derivatives (
            id               INTEGER PRIMARY KEY AUTOINCREMENT,
            asset_id         INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
            job_id           INTEGER NOT NULL,
            output_name      TEXT    NOT NULL,
            breakpoint_width INTEGER,
            chain            TEXT    NOT NULL,
            chain_hash       TEXT    NOT NULL,
            preset_name      TEXT,
            preset_version   INTEGER,
            storage_key      TEXT    NOT NULL,
            url              TEXT    NOT NULL,
            format           TEXT    NOT NULL,
            width            INTEGER NOT NULL,
            height           INTEGER NOT NULL,
            bytes            INTEGER NOT NULL,
            sha256           TEXT    NOT NULL,
            quality          INTEGER,
            frames           INTEGER NOT NULL DEFAULT 1,
            has_alpha        INTEGER NOT NULL DEFAULT 0,
            blurhash         TEXT,
            dominant_color   TEXT,
            timings          TEXT    NOT NULL DEFAULT '{}',
            created_at       REAL    NOT NULL,
            UNIQUE (asset_id, storage_key)
        );
        CREATE INDEX derivatives_job ON derivatives (job_id);
        CREATE INDEX derivatives_chain_hash ON derivatives (chain_hash);

        CREATE TABLE presets (
            name       TEXT    NOT NULL,
            version    INTEGER NOT NULL CHECK (version >= 1),
            outputs    TEXT    NOT NULL,
            created_at REAL    NOT NULL,
            retired_at REAL,
            PRIMARY KEY (name, version)
        );
        """,
        """
        CREATE TABLE workers (
            id         TEXT    PRIMARY KEY,
            host       TEXT    NOT NULL,
            pid        INTEGER NOT NULL,
            queues     TEXT    NOT NULL,
            slots      INTEGER NOT NULL,
            started_at REAL    NOT NULL,
            seen_at    REAL    NOT NULL,
            activity   TEXT    NOT NULL DEFAULT '{}'
        );
        """,
        """
        CREATE TABLE schedules (
            name       TEXT    PRIMARY KEY,
            cron       TEXT    NOT NULL,
            timezone   TEXT    NOT NULL DEFAULT 'UTC',
            action     TEXT    NOT NULL,
            enabled    INTEGER NOT NULL DEFAULT 1,
            created_at REAL    NOT NULL,
            updated_at REAL    NOT NULL
        );
        CREATE TABLE schedule_fires (
            schedule  TEXT    NOT NULL REFERENCES schedules (name) ON DELETE CASCADE,
            fire_time REAL    NOT NULL,
            fired_at  REAL    NOT NULL,
            job_id    INTEGER,
            PRIMARY KEY (schedule, fire_time)
        );
        CREATE TABLE sources (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            url           TEXT    NOT NULL UNIQUE,
            asset_id      INTEGER NOT NULL REFERENCES assets (id) ON DELETE CASCADE,
            version       INTEGER NOT NULL DEFAULT 1,
            etag          TEXT,
            last_modified TEXT,
            checked_at    REAL    NOT NULL,
            changed_at    REAL    NOT NULL
        );
        CREATE INDEX sources_asset ON sources (asset_id);
        ALTER TABLE derivatives ADD COLUMN superseded_at REAL;
        CREATE INDEX derivatives_preset ON derivatives (preset_name, asset_id) WHERE superseded_at IS NULL;
        CREATE INDEX derivatives_superseded ON derivatives (superseded_at) WHERE superseded_at IS NOT NULL;
        CREATE INDEX assets_created_at ON assets (created_at);
        """,
        """
        ALTER TABLE assets ADD COLUMN faces TEXT;
        """,
        // The write ledger (Migrations/0006_pending_writes.sql says why).
        """
        CREATE TABLE pending_writes (
            store       TEXT    NOT NULL,
            storage_key TEXT    NOT NULL,
            job_id      INTEGER NOT NULL,
            noted_at    REAL    NOT NULL,
            PRIMARY KEY (store, storage_key, job_id)
        );
        CREATE INDEX pending_writes_job ON pending_writes (job_id);
        CREATE INDEX pending_writes_noted_at ON pending_writes (noted_at);
        CREATE INDEX derivatives_storage_key ON derivatives (storage_key);
        """,
        // 0007: the operator's views list finished jobs newest first by (finished_at, id),
        // narrowed by outcome, queue or the last error's code, each from its index. (The
        // source's host is matched by `derive_source_host`, a function Derive registers on
        // its connections, so it is not indexed: an index on it would make the file
        // unwritable to tools without the function. The embedded queue's archive is small.)
        """
        CREATE INDEX job_archive_keyset ON job_archive (finished_at, id);
        DROP INDEX job_archive_finished_at;
        CREATE INDEX job_archive_outcome ON job_archive (outcome, finished_at, id);
        CREATE INDEX job_archive_queue ON job_archive (queue, finished_at, id);
        CREATE INDEX job_archive_error_code ON job_archive (json_extract(errors, '$[#-1].code'), finished_at, id);
        """,
        // 0008: the asset catalog's pages read each asset's current outputs narrowest first,
        // all its outputs newest first and its sources by URL, each from an index.
        """
        CREATE INDEX derivatives_asset_current ON derivatives (asset_id, width, id) WHERE superseded_at IS NULL;
        CREATE INDEX derivatives_asset_created ON derivatives (asset_id, created_at, id);
        CREATE INDEX sources_asset_url ON sources (asset_id, url);
        DROP INDEX sources_asset;
        """,
        // 10: queue control (Migrations/0010_queue_control.sql says why): no claim takes from a
        // queue named here; and the original file names uploads were stored from, by source.
        """
        CREATE TABLE paused_queues (
            queue     TEXT PRIMARY KEY CHECK (length(queue) BETWEEN 1 AND 64 AND queue NOT GLOB '*[^A-Za-z0-9_.-]*'),
            paused_at REAL NOT NULL,
            paused_by TEXT NOT NULL CHECK (length(paused_by) <= 200)
        );
        CREATE TABLE original_names (
            source   TEXT NOT NULL,
            name     TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 255),
            noted_at REAL NOT NULL,
            PRIMARY KEY (source, name)
        );
        """,
        // 11: asset_tags_context: the tags and context a job gives its asset, as JSON
        // (Migrations/0011_asset_tags_context.sql says why).
        """
        ALTER TABLE assets ADD COLUMN tags TEXT;
        ALTER TABLE assets ADD COLUMN context TEXT;
        """,
        // 12: served_assets: what `derive serve` keeps of uploaded assets, their derivatives and
        // the notifications sent (Migrations/0012_served_assets.sql).
        """
        CREATE TABLE served_assets (
            cloud           TEXT    NOT NULL,
            public_id       TEXT    NOT NULL,
            version         INTEGER NOT NULL,
            format          TEXT    NOT NULL,
            bytes           INTEGER NOT NULL,
            width           INTEGER NOT NULL,
            height          INTEGER NOT NULL,
            tags            TEXT    NOT NULL DEFAULT '[]',
            context         TEXT    NOT NULL DEFAULT '{}',
            original_key    TEXT    NOT NULL,
            original_sha256 TEXT    NOT NULL,
            eager           TEXT    NOT NULL DEFAULT '[]',
            created_at      REAL    NOT NULL,
            PRIMARY KEY (cloud, public_id)
        );
        CREATE INDEX served_assets_original ON served_assets (original_sha256);
        CREATE TABLE served_derivatives (
            cloud          TEXT    NOT NULL,
            public_id      TEXT    NOT NULL,
            version        INTEGER NOT NULL,
            identity       TEXT    NOT NULL,
            transformation TEXT    NOT NULL,
            format         TEXT    NOT NULL,
            storage_key    TEXT    NOT NULL,
            width          INTEGER NOT NULL,
            height         INTEGER NOT NULL,
            bytes          INTEGER NOT NULL,
            sha256         TEXT    NOT NULL,
            job_id         INTEGER NOT NULL,
            created_at     REAL    NOT NULL,
            PRIMARY KEY (cloud, public_id, identity),
            FOREIGN KEY (cloud, public_id) REFERENCES served_assets (cloud, public_id) ON DELETE CASCADE
        );
        CREATE TABLE served_notifications (
            id        INTEGER PRIMARY KEY AUTOINCREMENT,
            cloud     TEXT    NOT NULL,
            public_id TEXT    NOT NULL,
            url       TEXT    NOT NULL,
            type      TEXT    NOT NULL,
            status    INTEGER,
            attempts  INTEGER NOT NULL,
            error     TEXT,
            sent_at   REAL    NOT NULL
        );
        CREATE INDEX served_notifications_asset ON served_notifications (cloud, public_id, id);
        """,
        // 13: job_workers. A finished job keeps the worker that ran it (the lease's owner, NULL
        // for one cancelled while waiting); totals per queue and per worker read one index over
        // their window, and a job's page finds the generations of its work by dedupe key.
        """
        ALTER TABLE job_archive ADD COLUMN worker TEXT;
        CREATE INDEX job_archive_totals ON job_archive (finished_at, queue, worker, outcome);
        CREATE INDEX job_archive_dedupe ON job_archive (dedupe_key, id) WHERE dedupe_key IS NOT NULL;
        """,
        // 14: served_outbox. `derive serve`'s notifications to send, kept until sent or given up
        // (state 'done') so one pending when serve stops is sent by the next; a claim moves
        // next_at on by a lease. The key's name, never its secret.
        """
        CREATE TABLE served_outbox (
            id         INTEGER PRIMARY KEY AUTOINCREMENT,
            cloud      TEXT    NOT NULL,
            public_id  TEXT    NOT NULL,
            url        TEXT    NOT NULL,
            type       TEXT    NOT NULL CHECK (type IN ('upload', 'eager')),
            key_name   TEXT    NOT NULL,
            body       TEXT,
            job_id     INTEGER,
            base       TEXT,
            attempts   INTEGER NOT NULL DEFAULT 0,
            next_at    REAL    NOT NULL,
            state      TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done')),
            created_at REAL    NOT NULL
        );
        CREATE INDEX served_outbox_due ON served_outbox (next_at, id) WHERE state = 'pending';
        """,
        // 15: the index behind the Admin API's listings by creation time, on the whole
        // microseconds the cursors carry (Migrations/0015; public ids are the primary key's
        // order already; tags and context are scanned).
        """
        CREATE INDEX served_assets_created ON served_assets (cloud, CAST(round(created_at * 1000000) AS INTEGER), public_id);
        """,
        // 16: the generation number every change to what derive serve delivers moves on, so
        // that each serve process drops the responses it keeps in memory (Migrations/0016).
        """
        CREATE TABLE served_asset_generation (
            cloud      TEXT    PRIMARY KEY,
            generation INTEGER NOT NULL
        );
        CREATE TRIGGER served_assets_updated AFTER UPDATE ON served_assets BEGIN
            INSERT INTO served_asset_generation (cloud, generation) VALUES (OLD.cloud, 1)
            ON CONFLICT (cloud) DO UPDATE SET generation = generation + 1;
        END;
        CREATE TRIGGER served_assets_deleted AFTER DELETE ON served_assets BEGIN
            INSERT INTO served_asset_generation (cloud, generation) VALUES (OLD.cloud, 1)
            ON CONFLICT (cloud) DO UPDATE SET generation = generation + 1;
        END;
        CREATE TRIGGER served_derivatives_updated AFTER UPDATE ON served_derivatives BEGIN
            INSERT INTO served_asset_generation (cloud, generation) VALUES (OLD.cloud, 1)
            ON CONFLICT (cloud) DO UPDATE SET generation = generation + 1;
        END;
        CREATE TRIGGER served_derivatives_deleted AFTER DELETE ON served_derivatives BEGIN
            INSERT INTO served_asset_generation (cloud, generation) VALUES (OLD.cloud, 1)
            ON CONFLICT (cloud) DO UPDATE SET generation = generation + 1;
        END;
        """,
        // 17: the indexes behind freeing the store's objects of deleted served assets: whether
        // any row still names a key is one probe each (Migrations/0017).
        """
        CREATE INDEX served_assets_original_key ON served_assets (original_key);
        CREATE INDEX served_derivatives_storage_key ON served_derivatives (storage_key);
        """,
        // 18: Cloudinary's upload mappings, a folder's URL prefix (Migrations/0018).
        """
        CREATE TABLE upload_mappings (
            cloud      TEXT NOT NULL,
            folder     TEXT NOT NULL,
            template   TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (cloud, folder)
        );
        """,
    ]

    /// Brings the file to the newest version. Concurrent openers take turns on the write
    /// lock; the later ones find it done.
    static func migrate(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.transaction { () throws(SQLiteError) in
            let current = try connection.query("PRAGMA user_version").first?.first?.int ?? 0
            guard current <= versions.count else {
                throw SQLiteError(code: SQLITE_MISUSE_CODE, message: "the queue file is at schema version \(current), newer than this derive "
                                      + "(\(versions.count)); upgrade derive")
            }
            for version in current..<versions.count {
                try connection.execute(versions[version])
                try connection.execute("PRAGMA user_version = \(version + 1)")
            }
        }
    }
}

/// SQLITE_MISUSE, for errors Derive raises about the file itself.
let SQLITE_MISUSE_CODE: Int32 = 21
