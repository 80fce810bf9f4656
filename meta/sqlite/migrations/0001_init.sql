CREATE TABLE buckets (
    id                     TEXT    NOT NULL PRIMARY KEY,
    min_upload_file_size   INTEGER NOT NULL,
    max_upload_file_size   INTEGER NOT NULL,
    allowed_mime_types     TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    cache_control          TEXT    NOT NULL DEFAULT '',
    download_expiration    INTEGER NOT NULL,
    presigned_urls_enabled INTEGER NOT NULL,
    public                 INTEGER NOT NULL,
    allow_inline           INTEGER NOT NULL,
    created_at             INTEGER NOT NULL, -- Unix microseconds, UTC
    updated_at             INTEGER NOT NULL
) STRICT;

CREATE TABLE files (
    id                  TEXT    NOT NULL PRIMARY KEY, -- canonical lower-case UUID
    bucket_id           TEXT    NOT NULL REFERENCES buckets (id) ON DELETE RESTRICT,
    name                TEXT    NOT NULL,
    size                INTEGER NOT NULL DEFAULT 0,
    mime_type           TEXT    NOT NULL DEFAULT '',
    etag                TEXT    NOT NULL DEFAULT '',
    is_uploaded         INTEGER NOT NULL DEFAULT 0,
    uploaded_by_user_id TEXT    NOT NULL DEFAULT '',
    metadata            TEXT    NOT NULL DEFAULT '{}', -- JSON object
    blob_key            TEXT    NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
) STRICT;

CREATE INDEX files_bucket_name_id ON files (bucket_id, name, id);
CREATE INDEX files_blob_key ON files (blob_key);
CREATE INDEX files_not_uploaded ON files (created_at, id) WHERE is_uploaded = 0;

CREATE TABLE upload_intents (
    blob_key   TEXT    NOT NULL PRIMARY KEY,
    file_id    TEXT    NOT NULL DEFAULT '', -- '' when the upload replaces or creates later
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX upload_intents_created_at ON upload_intents (created_at);
