-- 0015: the indexes behind the Admin API's listings over derive serve's assets (issue 38).
-- Pages are keyset pages in code-point order of public ids (COLLATE "C": a prefix is one
-- index range, and the order is the same as SQLite's and the memory queue's) or by creation
-- time; tags and context are found through GIN indexes on their JSON.
CREATE INDEX served_assets_public_id ON derive.served_assets (cloud, public_id COLLATE "C");
CREATE INDEX served_assets_created ON derive.served_assets (cloud, created_at, public_id COLLATE "C");
CREATE INDEX served_assets_tags ON derive.served_assets USING gin (tags jsonb_path_ops);
CREATE INDEX served_assets_context ON derive.served_assets USING gin (context);
