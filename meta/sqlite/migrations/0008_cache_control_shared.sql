-- A bucket's cacheControlShared (coffer.Bucket.CacheControlShared): off, downloads that
-- needed a credential are private for caches; on, every download carries the
-- bucket's cacheControl and Surrogate-Control, as hasura-storage's do.
ALTER TABLE buckets ADD COLUMN cache_control_shared INTEGER NOT NULL DEFAULT 0;
