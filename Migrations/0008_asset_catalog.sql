-- 0008: what the dashboard's asset pages read (AssetCatalog). A page of assets comes from the
-- primary key, newest first; each asset's narrowest current outputs, every output it ever had
-- newest first, and the sources that hold it each come from an index in the order shown, so a
-- page reads about as many rows as it shows and sorts none, however many assets there are.

-- The current outputs of an asset, narrowest first (and their count, from the index alone).
CREATE INDEX derivatives_asset_current ON derive.derivatives (asset_id, width, id) WHERE superseded_at IS NULL;
-- Every output of an asset, superseded ones too, newest first.
CREATE INDEX derivatives_asset_created ON derive.derivatives (asset_id, created_at, id);
-- The sources that hold an asset, by URL. (asset_id, url) serves every lookup by asset_id
-- that sources_asset did, the cascade from a deleted asset included.
CREATE INDEX sources_asset_url ON derive.sources (asset_id, url);
DROP INDEX derive.sources_asset;
