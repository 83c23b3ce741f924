-- 0017: the indexes behind freeing the store's objects when served assets are deleted
-- (issue 38). An original or derivative object is content-addressed and may be named by
-- several rows; after a delete, an object is removed only when no served asset (its
-- original), no served derivative and no job's derivative row names its key, and these
-- indexes make each of those checks one index probe.
CREATE INDEX served_assets_original_key ON derive.served_assets (original_key);
CREATE INDEX served_derivatives_storage_key ON derive.served_derivatives (storage_key);
