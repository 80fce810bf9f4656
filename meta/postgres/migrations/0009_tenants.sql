-- Tenants (meta.Tenanted, meta.Tenants, meta.Usage). Every table holding a tenant's data
-- gets tenant_id; every row that exists now belongs to the default tenant '' and keeps
-- its ids, names, blob keys and timestamps: a deployment upgrades with nothing else
-- changed (a column with a constant default does not rewrite a table; the new keys
-- rebuild their indexes once, under the migration's locks). Keys are scoped by tenant:
-- buckets (tenant_id, id), files (tenant_id, id) referencing buckets by (tenant_id,
-- bucket_id), the named-file key (tenant_id, bucket_id, name), upload intents
-- (tenant_id, blob_key), rules one row per tenant. Subscription, event, delivery and
-- rejection ids stay global keys (the server makes them, random): their rows carry
-- tenant_id and every scoped query binds it.
ALTER TABLE buckets ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE files DROP CONSTRAINT files_bucket_id_fkey;
ALTER TABLE buckets DROP CONSTRAINT buckets_pkey, ADD PRIMARY KEY (tenant_id, id);
ALTER TABLE files DROP CONSTRAINT files_pkey, ADD PRIMARY KEY (tenant_id, id),
    ADD FOREIGN KEY (tenant_id, bucket_id) REFERENCES buckets (tenant_id, id) ON DELETE RESTRICT;

DROP INDEX files_bucket_name_id;
CREATE INDEX files_bucket_name_id ON files (tenant_id, bucket_id, name, id);
DROP INDEX files_blob_key;
CREATE INDEX files_blob_key ON files (tenant_id, blob_key);
DROP INDEX files_not_uploaded;
CREATE INDEX files_not_uploaded ON files (tenant_id, created_at, id) WHERE NOT is_uploaded;
DROP INDEX files_bucket_named;
CREATE UNIQUE INDEX files_bucket_named ON files (tenant_id, bucket_id, name) WHERE named;

ALTER TABLE upload_intents ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE upload_intents DROP CONSTRAINT upload_intents_pkey, ADD PRIMARY KEY (tenant_id, blob_key);
DROP INDEX upload_intents_created_at;
CREATE INDEX upload_intents_created_at ON upload_intents (tenant_id, created_at);

-- The permission rules document: one row per tenant.
ALTER TABLE rules ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE rules DROP CONSTRAINT rules_pkey, DROP COLUMN id, ADD PRIMARY KEY (tenant_id);

ALTER TABLE webhook_subscriptions ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE webhook_events ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE upload_rejections ADD COLUMN tenant_id text COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX webhook_subscriptions_tenant ON webhook_subscriptions (tenant_id, created_at, id);
CREATE INDEX webhook_events_tenant ON webhook_events (tenant_id);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries (tenant_id);
DROP INDEX upload_rejections_newest;
CREATE INDEX upload_rejections_newest ON upload_rejections (tenant_id, created_at DESC, id DESC);

-- Cache invalidation (0003, 0005) now names the tenant. Payloads on coffer_invalidate:
--   default tenant '':  "f:<file id>"           "b:<bucket id>"           "r"
--   tenant T:           "f:<T>/<file id>"       "b:<T>/<bucket id>"       "r:<T>"
--   any TRUNCATE:       "*" (0005, unchanged: flush everything; also of the tables below)
--   registry:           "t:<T>" when tenant T's row or one of its hosts changes (a reader
--                       that does not know "t:" flushes everything, which is safe)
-- so a deployment without tenants sends exactly what it sent before. A reader splits
-- the part after "f:" or "b:" at its first '/': tenant ids never contain '/' or ':',
-- file ids are UUIDs and bucket ids (coffer.ValidateBucketID) never contain '/', so a
-- payload with a '/' is always a named tenant's, and one without is the default's.
-- Rules now notify per row, to know the tenant. The payload is built in plpgsql: an SQL
-- function called per row is planned on every call.
CREATE OR REPLACE FUNCTION coffer_notify_invalidate() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    kind text := CASE TG_TABLE_NAME WHEN 'files' THEN 'f:' WHEN 'buckets' THEN 'b:' ELSE 'r' END;
BEGIN
    IF kind = 'r' THEN
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('coffer_invalidate', CASE WHEN OLD.tenant_id = '' THEN 'r' ELSE 'r:' || OLD.tenant_id END);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('coffer_invalidate', CASE WHEN NEW.tenant_id = '' THEN 'r' ELSE 'r:' || NEW.tenant_id END);
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('coffer_invalidate', kind || CASE WHEN OLD.tenant_id = '' THEN '' ELSE OLD.tenant_id || '/' END
            || OLD.id::text);
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.id::text <> OLD.id::text OR NEW.tenant_id <> OLD.tenant_id) THEN
        PERFORM pg_notify('coffer_invalidate', kind || CASE WHEN NEW.tenant_id = '' THEN '' ELSE NEW.tenant_id || '/' END
            || NEW.id::text);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER rules_invalidate ON rules;
CREATE TRIGGER rules_invalidate AFTER INSERT OR UPDATE OR DELETE ON rules
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_invalidate();

-- The registry. settings is the tenant's settings document, opaque here.
CREATE TABLE tenants (
    id         text COLLATE "C" PRIMARY KEY,
    settings   bytea       NOT NULL,
    state      text        NOT NULL DEFAULT 'active',
    max_bytes  bigint      NOT NULL DEFAULT 0, -- quota; 0 for none
    max_files  bigint      NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Host names, unique across tenants.
CREATE TABLE tenant_hosts (
    host      text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE
);

CREATE INDEX tenant_hosts_tenant ON tenant_hosts (tenant_id);

-- "t:<tenant>" on every change to the registry (see the payloads above).
-- The tenant's column is id in tenants, tenant_id in tenant_hosts; a row is read as
-- jsonb by name (registry changes are rare).
CREATE FUNCTION coffer_notify_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    col text := CASE TG_TABLE_NAME WHEN 'tenants' THEN 'id' ELSE 'tenant_id' END;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('coffer_invalidate', 't:' || (to_jsonb(OLD) ->> col));
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('coffer_invalidate', 't:' || (to_jsonb(NEW) ->> col));
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER tenants_invalidate AFTER INSERT OR UPDATE OR DELETE ON tenants
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_tenant();
CREATE TRIGGER tenant_hosts_invalidate AFTER INSERT OR UPDATE OR DELETE ON tenant_hosts
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_tenant();
CREATE TRIGGER tenants_truncate_invalidate AFTER TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
CREATE TRIGGER tenant_hosts_truncate_invalidate AFTER TRUNCATE ON tenant_hosts
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();

-- Usage: the size and count of each tenant's uploaded files, kept by the trigger below
-- in the transaction of every change to files (whatever statement makes it, the
-- one-statement upload commit included), and the quota check. A tenant's usage is the
-- sum of its rows here, one per shard:
--   - a tenant with a quota (a tenants row with max_bytes or max_files > 0) counts every
--     change in shard 0. The trigger's upsert locks that row until the transaction
--     ends, so the tenant's concurrent commits take turns and each checks the total
--     (shard 0, locked, plus the other shards, which only hold what was counted before
--     the quota was set) including every commit before it: they cannot overshoot. A
--     change that grows the tenant past max_bytes or max_files fails with SQLSTATE
--     CQ001 (EQUOTA to callers) and, being an error, changes nothing. A shrinking
--     change always passes, even over a quota lowered since.
--   - a tenant without one (the default tenant, and 0 quotas) counts each change in the
--     shard of its connection (backend pid mod 64), so that concurrent uploads on
--     different connections do not queue on one row lock held through each commit's
--     WAL flush: with fsync on, one row made the default tenant's uploads 1.09x slower
--     than these shards (BenchmarkUploadWrites, pool of 4; no difference with fsync off).
CREATE TABLE tenant_usage (
    tenant_id text COLLATE "C" NOT NULL,
    shard     integer NOT NULL DEFAULT 0,
    bytes     bigint  NOT NULL DEFAULT 0,
    files     bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, shard)
);

INSERT INTO tenant_usage (tenant_id, bytes, files)
    SELECT '', coalesce(sum(size), 0), count(*) FROM files WHERE is_uploaded;

CREATE FUNCTION coffer_usage() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    tenant text;
    db bigint := 0;
    df bigint := 0;
    ub bigint;
    uf bigint;
    mb bigint := 0;
    mf bigint := 0;
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.is_uploaded THEN
        tenant := OLD.tenant_id; db := -OLD.size; df := -1;
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.is_uploaded THEN
        tenant := NEW.tenant_id; db := db + NEW.size; df := df + 1;
    END IF;
    IF db = 0 AND df = 0 THEN
        RETURN NULL;
    END IF;
    IF tenant <> '' THEN
        SELECT max_bytes, max_files INTO mb, mf FROM tenants WHERE id = tenant;
    END IF;
    IF coalesce(mb, 0) <= 0 AND coalesce(mf, 0) <= 0 THEN
        INSERT INTO tenant_usage AS u (tenant_id, shard, bytes, files) VALUES (tenant, pg_backend_pid() % 64, db, df)
            ON CONFLICT (tenant_id, shard) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes, files = u.files + EXCLUDED.files;
        RETURN NULL;
    END IF;
    INSERT INTO tenant_usage AS u (tenant_id, shard, bytes, files) VALUES (tenant, 0, db, df)
        ON CONFLICT (tenant_id, shard) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes, files = u.files + EXCLUDED.files
        RETURNING u.bytes, u.files INTO ub, uf;
    IF db <= 0 AND df <= 0 THEN
        RETURN NULL;
    END IF;
    SELECT ub + coalesce(sum(bytes), 0), uf + coalesce(sum(files), 0) INTO ub, uf
        FROM tenant_usage WHERE tenant_id = tenant AND shard <> 0;
    IF db > 0 AND mb > 0 AND ub > mb THEN
        RAISE EXCEPTION 'tenant storage quota exceeded: the change would store % of % bytes', ub, mb
            USING ERRCODE = 'CQ001';
    END IF;
    IF df > 0 AND mf > 0 AND uf > mf THEN
        RAISE EXCEPTION 'tenant storage quota exceeded: the change would store % of % files', uf, mf
            USING ERRCODE = 'CQ001';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER files_usage AFTER INSERT OR UPDATE OF size, is_uploaded OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION coffer_usage();
