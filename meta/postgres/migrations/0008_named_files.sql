-- Name-addressed files (meta.Store GetFileByName / PutFileByName): at most one named
-- file per (bucket, name). Rows that exist today and every hasura /v1 upload are not
-- named (named = false) and may keep sharing a name, as hasura-storage allows; the
-- unique key covers named rows only, so no existing row has to change (adding a column
-- with a constant default does not rewrite the table). See the meta package doc.
ALTER TABLE files ADD COLUMN named boolean NOT NULL DEFAULT false;

CREATE UNIQUE INDEX files_bucket_named ON files (bucket_id, name) WHERE named;
