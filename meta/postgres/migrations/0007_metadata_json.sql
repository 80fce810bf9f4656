-- File metadata is kept as the client sent it (key order, number literals), like the
-- SQLite store: json stores the validated text, jsonb reordered keys and rewrote numbers.
-- Rows written before keep jsonb's rendering (read back compacted). The table is
-- rewritten once, under an exclusive lock.
ALTER TABLE files ALTER COLUMN metadata DROP DEFAULT;
ALTER TABLE files ALTER COLUMN metadata TYPE json USING metadata::json;
ALTER TABLE files ALTER COLUMN metadata SET DEFAULT '{}';
