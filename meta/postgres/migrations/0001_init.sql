CREATE TABLE buckets (
    id                     text COLLATE "C" PRIMARY KEY,
    min_upload_file_size   bigint      NOT NULL,
    max_upload_file_size   bigint      NOT NULL,
    allowed_mime_types     text[]      NOT NULL DEFAULT '{}',
    cache_control          text        NOT NULL DEFAULT '',
    download_expiration    bigint      NOT NULL,
    presigned_urls_enabled boolean     NOT NULL,
    public                 boolean     NOT NULL,
    allow_inline           boolean     NOT NULL,
    created_at             timestamptz NOT NULL,
    updated_at             timestamptz NOT NULL
);

CREATE TABLE files (
    id                  uuid PRIMARY KEY,
    bucket_id           text COLLATE "C" NOT NULL REFERENCES buckets (id) ON DELETE RESTRICT,
    name                text COLLATE "C" NOT NULL,
    size                bigint      NOT NULL DEFAULT 0,
    mime_type           text        NOT NULL DEFAULT '',
    etag                text        NOT NULL DEFAULT '',
    is_uploaded         boolean     NOT NULL DEFAULT false,
    uploaded_by_user_id text        NOT NULL DEFAULT '',
    metadata            jsonb       NOT NULL DEFAULT '{}',
    blob_key            text        NOT NULL,
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);

CREATE INDEX files_bucket_name_id ON files (bucket_id, name, id);
CREATE INDEX files_blob_key ON files (blob_key);
CREATE INDEX files_not_uploaded ON files (created_at, id) WHERE NOT is_uploaded;

CREATE TABLE upload_intents (
    blob_key   text PRIMARY KEY,
    file_id    text        NOT NULL DEFAULT '', -- '' when the upload replaces or creates later
    created_at timestamptz NOT NULL
);

CREATE INDEX upload_intents_created_at ON upload_intents (created_at);
