-- Tenants (meta.Tenanted, meta.Tenants, meta.Usage). Every table holding a tenant's data
-- gets tenant_id; every row that exists now belongs to the default tenant '' and keeps
-- its ids, names, blob keys and timestamps: a deployment upgrades with nothing else
-- changed. Keys are scoped by tenant: buckets (tenant_id, id), files (tenant_id, id)
-- referencing buckets by (tenant_id, bucket_id), the named-file key (tenant_id,
-- bucket_id, name), upload intents (tenant_id, blob_key), rules one row per tenant.
-- Subscription, event, delivery and rejection ids stay global keys (the server makes
-- them, random): their rows carry tenant_id and every scoped query binds it.
--
-- SQLite cannot change a primary or foreign key in place, so buckets, files,
-- upload_intents and rules are rebuilt (the 12-step procedure of
-- https://sqlite.org/lang_altertable.html#otheralter, inside Migrate's one transaction:
-- foreign keys stay on, which is safe here because the new tables are created and filled
-- before the old ones are dropped, files before buckets, and RENAME rewrites the new
-- files table's reference to new_buckets into buckets).
CREATE TABLE new_buckets (
    tenant_id              TEXT    NOT NULL DEFAULT '',
    id                     TEXT    NOT NULL,
    min_upload_file_size   INTEGER NOT NULL,
    max_upload_file_size   INTEGER NOT NULL,
    allowed_mime_types     TEXT    NOT NULL DEFAULT '[]', -- JSON array of strings
    cache_control          TEXT    NOT NULL DEFAULT '',
    download_expiration    INTEGER NOT NULL,
    presigned_urls_enabled INTEGER NOT NULL,
    public                 INTEGER NOT NULL,
    allow_inline           INTEGER NOT NULL,
    created_at             INTEGER NOT NULL, -- Unix microseconds, UTC
    updated_at             INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
) STRICT;

INSERT INTO new_buckets (tenant_id, id, min_upload_file_size, max_upload_file_size, allowed_mime_types,
        cache_control, download_expiration, presigned_urls_enabled, public, allow_inline, created_at, updated_at)
    SELECT '', id, min_upload_file_size, max_upload_file_size, allowed_mime_types, cache_control,
        download_expiration, presigned_urls_enabled, public, allow_inline, created_at, updated_at
    FROM buckets;

CREATE TABLE new_files (
    tenant_id           TEXT    NOT NULL DEFAULT '',
    id                  TEXT    NOT NULL, -- canonical lower-case UUID
    bucket_id           TEXT    NOT NULL,
    name                TEXT    NOT NULL,
    size                INTEGER NOT NULL DEFAULT 0,
    mime_type           TEXT    NOT NULL DEFAULT '',
    etag                TEXT    NOT NULL DEFAULT '',
    is_uploaded         INTEGER NOT NULL DEFAULT 0,
    uploaded_by_user_id TEXT    NOT NULL DEFAULT '',
    metadata            TEXT    NOT NULL DEFAULT '{}', -- JSON object
    blob_key            TEXT    NOT NULL,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    named               INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, id),
    FOREIGN KEY (tenant_id, bucket_id) REFERENCES new_buckets (tenant_id, id) ON DELETE RESTRICT
) STRICT;

INSERT INTO new_files (tenant_id, id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id,
        metadata, blob_key, created_at, updated_at, named)
    SELECT '', id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id,
        metadata, blob_key, created_at, updated_at, named
    FROM files;

DROP TABLE files;
DROP TABLE buckets;
ALTER TABLE new_buckets RENAME TO buckets;
ALTER TABLE new_files RENAME TO files;

CREATE INDEX files_bucket_name_id ON files (tenant_id, bucket_id, name, id);
CREATE INDEX files_blob_key ON files (tenant_id, blob_key);
CREATE INDEX files_not_uploaded ON files (tenant_id, created_at, id) WHERE is_uploaded = 0;
CREATE UNIQUE INDEX files_bucket_named ON files (tenant_id, bucket_id, name) WHERE named = 1;

CREATE TABLE new_upload_intents (
    tenant_id  TEXT    NOT NULL DEFAULT '',
    blob_key   TEXT    NOT NULL,
    file_id    TEXT    NOT NULL DEFAULT '', -- '' when the upload replaces or creates later
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, blob_key)
) STRICT;

INSERT INTO new_upload_intents (tenant_id, blob_key, file_id, created_at)
    SELECT '', blob_key, file_id, created_at FROM upload_intents;
DROP TABLE upload_intents;
ALTER TABLE new_upload_intents RENAME TO upload_intents;
CREATE INDEX upload_intents_created_at ON upload_intents (tenant_id, created_at);

-- The permission rules document: one row per tenant.
CREATE TABLE new_rules (
    tenant_id  TEXT    NOT NULL PRIMARY KEY,
    document   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

INSERT INTO new_rules (tenant_id, document, updated_at) SELECT '', document, updated_at FROM rules;
DROP TABLE rules;
ALTER TABLE new_rules RENAME TO rules;

ALTER TABLE webhook_subscriptions ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';
ALTER TABLE upload_rejections ADD COLUMN tenant_id TEXT NOT NULL DEFAULT '';

CREATE INDEX webhook_subscriptions_tenant ON webhook_subscriptions (tenant_id, created_at, id);
CREATE INDEX webhook_events_tenant ON webhook_events (tenant_id);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id);
DROP INDEX upload_rejections_newest;
CREATE INDEX upload_rejections_newest ON upload_rejections (tenant_id, created_at DESC, id DESC);

-- The registry. settings is the tenant's settings document, opaque here.
CREATE TABLE tenants (
    id         TEXT    NOT NULL PRIMARY KEY,
    settings   BLOB    NOT NULL,
    state      TEXT    NOT NULL DEFAULT 'active',
    max_bytes  INTEGER NOT NULL DEFAULT 0, -- quota; 0 for none
    max_files  INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- Host names, unique across tenants.
CREATE TABLE tenant_hosts (
    host      TEXT NOT NULL PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
) STRICT;

CREATE INDEX tenant_hosts_tenant ON tenant_hosts (tenant_id);

-- Usage: the size and count of each tenant's uploaded files, kept by the triggers
-- below in the transaction of every change to files (whatever statement makes it),
-- and the quota check: a change that grows a tenant past its tenants row's max_bytes
-- or max_files fails (SQLITE_CONSTRAINT_TRIGGER with the message below, EQUOTA to
-- callers) and, being a failed statement, changes nothing. SQLite has one writer at a
-- time, so concurrent commits cannot overshoot. A shrinking change always passes, even
-- over a quota lowered since.
CREATE TABLE tenant_usage (
    tenant_id TEXT    NOT NULL,
    shard     INTEGER NOT NULL DEFAULT 0, -- always 0 here; PostgreSQL spreads some tenants over shards
    bytes     INTEGER NOT NULL DEFAULT 0,
    files     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, shard)
) STRICT;

INSERT INTO tenant_usage (tenant_id, bytes, files)
    SELECT '', coalesce(sum(size), 0), count(*) FROM files WHERE is_uploaded = 1;

CREATE TRIGGER files_usage_insert AFTER INSERT ON files WHEN NEW.is_uploaded = 1 BEGIN
    INSERT INTO tenant_usage (tenant_id, bytes, files) VALUES (NEW.tenant_id, NEW.size, 1)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET bytes = bytes + excluded.bytes, files = files + 1;
    SELECT RAISE(ABORT, 'tenant storage quota exceeded: the change would store ' ||
            CASE WHEN t.max_bytes > 0 AND u.bytes > t.max_bytes THEN u.bytes || ' of ' || t.max_bytes || ' bytes'
                ELSE u.files || ' of ' || t.max_files || ' files' END)
        FROM tenant_usage u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.tenant_id = NEW.tenant_id
            AND (t.max_bytes > 0 AND u.bytes > t.max_bytes AND NEW.size > 0
                OR t.max_files > 0 AND u.files > t.max_files);
END;

CREATE TRIGGER files_usage_delete AFTER DELETE ON files WHEN OLD.is_uploaded = 1 BEGIN
    INSERT INTO tenant_usage (tenant_id, bytes, files) VALUES (OLD.tenant_id, -OLD.size, -1)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET bytes = bytes + excluded.bytes, files = files + excluded.files;
END;

CREATE TRIGGER files_usage_update AFTER UPDATE OF size, is_uploaded ON files
    WHEN OLD.is_uploaded = 1 OR NEW.is_uploaded = 1 BEGIN
    INSERT INTO tenant_usage (tenant_id, bytes, files)
        VALUES (NEW.tenant_id, NEW.is_uploaded * NEW.size - OLD.is_uploaded * OLD.size,
            NEW.is_uploaded - OLD.is_uploaded)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET bytes = bytes + excluded.bytes, files = files + excluded.files;
    SELECT RAISE(ABORT, 'tenant storage quota exceeded: the change would store ' ||
            CASE WHEN t.max_bytes > 0 AND u.bytes > t.max_bytes THEN u.bytes || ' of ' || t.max_bytes || ' bytes'
                ELSE u.files || ' of ' || t.max_files || ' files' END)
        FROM tenant_usage u JOIN tenants t ON t.id = u.tenant_id
        WHERE u.tenant_id = NEW.tenant_id
            AND (t.max_bytes > 0 AND u.bytes > t.max_bytes
                    AND NEW.is_uploaded * NEW.size > OLD.is_uploaded * OLD.size
                OR t.max_files > 0 AND u.files > t.max_files AND NEW.is_uploaded > OLD.is_uploaded);
END;
