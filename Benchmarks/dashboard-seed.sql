-- Seeds a migrated Derive database with what the dashboard benchmark reads: a week of finished
-- jobs in derive.job_archive, and assets with their derivatives, presets and sources. Every
-- table is filled by one set-based INSERT ... SELECT generate_series; 100,000 jobs and 10,000
-- assets take a few seconds. Deterministic (no random()): the same counts give the same rows.
--
--   derive migrate --database "$URL"
--   psql "$URL" -v ON_ERROR_STOP=1 -f Benchmarks/dashboard-seed.sql
--   psql "$URL" -v ON_ERROR_STOP=1 -v jobs=1000000 -v assets=100000 -f Benchmarks/dashboard-seed.sql
--
-- Variables (psql -v NAME=VALUE): jobs (default 100000), assets (default 10000). Each asset gets
-- 3 to 6 derivatives. The script refuses a database that already has jobs, assets or presets
-- (seed a fresh one), runs in one transaction and ends with ANALYZE.

\if :{?jobs}
\else
    \set jobs 100000
\endif
\if :{?assets}
\else
    \set assets 10000
\endif

BEGIN;

DO $$
BEGIN
    IF EXISTS (SELECT FROM derive.job_archive) OR EXISTS (SELECT FROM derive.jobs) OR EXISTS (SELECT FROM derive.assets)
       OR EXISTS (SELECT FROM derive.presets) THEN
        RAISE EXCEPTION 'dashboard-seed.sql: the database already has jobs, assets or presets; seed a freshly migrated one';
    END IF;
END $$;

-- Finished jobs: ids 1..:jobs, finishing over the last 7 days (newest has the highest id), in
-- four queues, run by eight workers. Outcomes: about 85% completed, 12% failed (with one to three attempts' errors,
-- the last one's code varied), 3% cancelled. Sources on a dozen hosts, an S3 bucket and local
-- paths, so derive.source_host(payload ->> 'source') has NULLs and a long tail.
INSERT INTO derive.job_archive (id, queue, outcome, priority, attempt, max_attempts, dedupe_key, payload, errors, result,
                                created_at, started_at, finished_at, worker)
SELECT g,
       (ARRAY['default', 'default', 'default', 'bulk', 'bulk', 'priority', 'reprocess'])[1 + g % 7],
       o.outcome,
       CASE WHEN g % 7 = 5 THEN 10 ELSE 0 END,
       o.attempts, 5,
       CASE WHEN g % 11 = 0 THEN 'seed-' || g END,
       jsonb_build_object('version', 1, 'source', s.source, 'preset', (ARRAY['web', 'cards', 'thumbs'])[1 + g % 3]),
       CASE WHEN o.outcome = 'failed' THEN (
           SELECT jsonb_agg(jsonb_build_object(
                      'attempt', a, 'at', to_char(t.finished_at - (o.attempts - a) * interval '30 seconds', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                      'code', CASE WHEN a = o.attempts THEN e.code ELSE 'source_unavailable' END,
                      'detail', CASE WHEN a = o.attempts THEN e.detail ELSE 'origin answered 503' END,
                      'retryable', a < o.attempts) ORDER BY a)
           FROM generate_series(1, o.attempts) AS a)
            ELSE CASE WHEN o.attempts > 1 THEN jsonb_build_array(jsonb_build_object(
                     'attempt', 1, 'at', to_char(t.finished_at - interval '30 seconds', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
                     'code', 'source_unavailable', 'detail', 'origin answered 503', 'retryable', true)) ELSE '[]'::jsonb END
       END,
       CASE WHEN o.outcome = 'completed' THEN jsonb_build_object(
           'source', jsonb_build_object('sha256', md5(s.source) || md5(s.source), 'format', 'jpeg', 'width', 4000, 'height', 3000),
           'outputs', jsonb_build_array(
               jsonb_build_object('name', 'thumb', 'format', 'webp', 'width', 320, 'height', 240, 'bytes', 9000 + g % 5000),
               jsonb_build_object('name', 'large', 'format', 'avif', 'width', 1600, 'height', 1200, 'bytes', 90000 + g % 50000)),
           'timings', jsonb_build_object('fetch', 20 + g % 300, 'total', 150 + g % 2000)) END,
       t.finished_at - (1 + g % 600) * interval '1 second' - interval '2 seconds',
       t.finished_at - (150 + g % 2000) * interval '1 millisecond',
       t.finished_at,
       -- Eight workers; a cancelled job was waiting (no worker held it).
       CASE WHEN o.outcome <> 'cancelled' THEN 'worker-' || (g % 8) || '.internal:' || (1000 + g % 8) || ':seed' END
FROM generate_series(1, :jobs) AS g
CROSS JOIN LATERAL (SELECT now() - (:jobs - g) * (interval '7 days' / :jobs) AS finished_at) t
CROSS JOIN LATERAL (SELECT CASE WHEN g % 100 < 85 THEN 'completed' WHEN g % 100 < 97 THEN 'failed' ELSE 'cancelled' END AS outcome,
                           CASE WHEN g % 100 BETWEEN 85 AND 96 THEN 1 + g % 3 WHEN g % 13 = 0 THEN 2 ELSE 1 END AS attempts) o
CROSS JOIN LATERAL (SELECT CASE g % 20
                               WHEN 0 THEN 's3://media-bucket/originals/' || g || '.jpg'
                               WHEN 1 THEN '/srv/images/' || g || '.png'
                               WHEN 2 THEN 'https://user:secret@partner.example.net/feed/' || g || '.jpg'
                               ELSE 'https://img' || (g % 12) || '.example.com/photos/' || (g % 997) || '/' || g || '.jpg?w=1'
                           END AS source) s
CROSS JOIN LATERAL (SELECT (ARRAY['source_unavailable', 'source_unavailable', 'source_unavailable', 'corrupt_image', 'unsupported_format',
                                  'limit_exceeded', 'source_refused', 'decode_failed', 'storage_failed', 'invalid_job'])[1 + (g / 100) % 10] AS code,
                           'seeded failure ' || (g / 100) % 10 AS detail) e;

-- Presets: web (3 versions), cards (2), thumbs (3, retired), legacy (2, retired).
INSERT INTO derive.presets (name, version, outputs, created_at, retired_at)
SELECT p.name, v, jsonb_build_array(jsonb_build_object('name', 'small', 'chain', 'c_limit,w_' || (200 + 100 * v) || '/f_webp'),
                                    jsonb_build_object('name', 'large', 'chain', 'c_limit,w_' || (1200 + 200 * v) || '/f_avif')),
       now() - interval '30 days' + v * interval '7 days',
       CASE WHEN p.retired THEN now() - interval '1 day' END
FROM (VALUES ('web', 3, false), ('cards', 2, false), ('thumbs', 3, true), ('legacy', 2, true)) AS p(name, versions, retired)
CROSS JOIN LATERAL generate_series(1, p.versions) AS v;

-- Assets: created over the last 30 days in id order (the newest has the highest id); every
-- 7th has faces, every 5th was seen with alpha.
INSERT INTO derive.assets (sha256, source_url, bytes, format, width, height, pages, has_alpha, orientation, colour_space,
                           icc_description, exif, has_location, perceptual_hash, faces, created_at, updated_at)
SELECT md5('asset' || g) || md5('content' || g),
       'https://img' || (g % 12) || '.example.com/photos/' || (g % 997) || '/' || g || '.jpg',
       200000 + (g * 7919) % 4000000,
       (ARRAY['jpeg', 'jpeg', 'jpeg', 'png', 'webp', 'heif'])[1 + g % 6],
       800 + (g * 37) % 5200, 600 + (g * 53) % 3400, 1, g % 5 = 0, 1 + g % 8 / 7 * 5,
       'srgb', CASE WHEN g % 3 = 0 THEN 'sRGB IEC61966-2.1' END,
       CASE WHEN g % 2 = 0 THEN jsonb_build_object('make', 'Kodak', 'takenAt', '2024-05-01T10:00:00') ELSE '{}'::jsonb END,
       g % 9 = 0, lpad(to_hex(g * 2654435761 % 4294967296), 16, '0'),
       CASE WHEN g % 7 = 0 THEN jsonb_build_object('count', 1 + g % 3, 'detector', 'dlib-hog', 'boxes',
                   (SELECT jsonb_agg(jsonb_build_object('x', 100 + 200 * f, 'y', 120, 'width', 180, 'height', 180, 'score', 0.5 + f * 0.25)
                                     ORDER BY f)
                    FROM generate_series(0, g % 3) AS f)) END,
       now() - (:assets - g) * (interval '30 days' / :assets),
       now() - (:assets - g) * (interval '30 days' / :assets) + interval '1 hour'
FROM generate_series(1, :assets) AS g;

-- Derivatives: 3 to 6 per asset (3 + id % 4). Each asset has one preset (web, cards or
-- thumbs by id); its outputs are at width 200 * n. For one asset in four the first output is
-- an older version's, superseded; for one in five the current outputs were made by an older
-- version than the preset's newest (stale, not superseded).
INSERT INTO derive.derivatives (asset_id, job_id, output_name, breakpoint_width, chain, chain_hash, preset_name, preset_version,
                                storage_key, url, format, width, height, bytes, sha256, quality, frames, has_alpha, blurhash,
                                dominant_color, timings, created_at, superseded_at)
SELECT a.id, 1 + (a.id * 10 + n) % :jobs, 'out' || n, CASE WHEN n > 2 THEN 200 * n END,
       jsonb_build_object('chain', 'c_limit,w_' || 200 * n || '/f_webp'), md5('chain' || n || p.version),
       p.name, p.version,
       a.sha256 || '/out' || n || '-' || p.version || '.webp',
       'https://cdn.example.com/' || a.sha256 || '/out' || n || '-' || p.version || '.webp',
       CASE WHEN n % 3 = 0 THEN 'avif' ELSE 'webp' END, 200 * n, 150 * n, 4000 * n + a.id % 1000, md5('out' || a.id || n) || md5(a.sha256),
       CASE WHEN n % 2 = 0 THEN 80 END, 1, false, 'LEHV6nWB2yk8pyo0adR*.7kCMdnj', '#' || lpad(to_hex(a.id * 7919 % 16777216), 6, '0'),
       jsonb_build_object('apply', 10 + n, 'encode', 20 + n),
       a.created_at + n * interval '1 second' + CASE WHEN p.superseded THEN interval '0' ELSE interval '1 day' END,
       CASE WHEN p.superseded THEN a.created_at + interval '1 day' END
FROM derive.assets a
CROSS JOIN LATERAL generate_series(1, 3 + a.id::integer % 4) AS n
CROSS JOIN LATERAL (
    SELECT q.name, CASE WHEN n = 1 AND a.id % 4 = 0 THEN m.newest - 1 WHEN a.id % 5 = 0 THEN m.newest - 1 ELSE m.newest END AS version,
           n = 1 AND a.id % 4 = 0 AS superseded
    FROM (SELECT (ARRAY['web', 'cards', 'thumbs'])[1 + a.id::integer % 3] AS name) q
    CROSS JOIN LATERAL (SELECT max(version) AS newest FROM derive.presets WHERE name = q.name) m
) p;

-- Sources: every asset's URL holds it; one in ten was also fetched from a second URL, and one in
-- six has changed content at least once (version 2 or 3).
INSERT INTO derive.sources (url, asset_id, version, etag, last_modified, checked_at, changed_at)
SELECT u.url, a.id, 1 + CASE WHEN a.id % 6 = 0 THEN 1 + (a.id / 6) % 2 ELSE 0 END,
       CASE WHEN a.id % 4 <> 0 THEN '"' || left(a.sha256, 16) || '"' END,
       CASE WHEN a.id % 3 = 0 THEN to_char(a.created_at, 'Dy, DD Mon YYYY HH24:MI:SS "GMT"') END,
       now() - (a.id % 72) * interval '1 hour',
       a.created_at
FROM derive.assets a
CROSS JOIN LATERAL (SELECT a.source_url AS url
                    UNION ALL
                    SELECT 's3://media-bucket/originals/' || a.id || '.jpg' WHERE a.id % 10 = 0) u;

-- Later submissions get ids past the seeded archive.
SELECT setval(pg_get_serial_sequence('derive.jobs', 'id'), :jobs);

COMMIT;

ANALYZE derive.job_archive, derive.presets, derive.assets, derive.derivatives, derive.sources;

SELECT (SELECT count(*) FROM derive.job_archive) AS jobs,
       (SELECT count(*) FROM derive.job_archive WHERE outcome = 'failed') AS failed,
       (SELECT count(*) FROM derive.assets) AS assets,
       (SELECT count(*) FROM derive.derivatives) AS derivatives,
       (SELECT count(*) FROM derive.derivatives WHERE superseded_at IS NOT NULL) AS superseded,
       (SELECT count(*) FROM derive.presets) AS preset_versions,
       (SELECT count(*) FROM derive.sources) AS sources;
