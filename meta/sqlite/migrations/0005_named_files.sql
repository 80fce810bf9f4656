-- Name-addressed files (meta.Store GetFileByName / PutFileByName): at most one named
-- file per (bucket, name). Rows that exist today and every hasura /v1 upload are not
-- named (named = 0) and may keep sharing a name, as hasura-storage allows; the unique
-- key covers named rows only, so no existing row has to change. See the meta package
-- doc.
ALTER TABLE files ADD COLUMN named INTEGER NOT NULL DEFAULT 0;

CREATE UNIQUE INDEX files_bucket_named ON files (bucket_id, name) WHERE named = 1;
