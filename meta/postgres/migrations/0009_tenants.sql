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
--   any TRUNCATE:       "*" (0005, unchanged: flush everything)
-- so a deployment without tenants sends exactly what it sent before. A reader splits
-- the part after "f:" or "b:" at its first '/': tenant ids never contain '/' or ':',
-- file ids are UUIDs and bucket ids (coffer.ValidateBucketID) never contain '/', so a
-- payload with a '/' is always a named tenant's, and one without is the default's.
-- Rules now notify per row, to know the tenant.
CREATE OR REPLACE FUNCTION coffer_notify_invalidate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'rules' THEN
        IF TG_OP <> 'INSERT' THEN
            PERFORM pg_notify('coffer_invalidate', coffer_invalidate_payload('r', OLD.tenant_id, ''));
        END IF;
        IF TG_OP <> 'DELETE' THEN
            PERFORM pg_notify('coffer_invalidate', coffer_invalidate_payload('r', NEW.tenant_id, ''));
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('coffer_invalidate', coffer_invalidate_payload(left(TG_TABLE_NAME, 1) || ':',
            OLD.tenant_id, OLD.id::text));
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.id::text <> OLD.id::text OR NEW.tenant_id <> OLD.tenant_id) THEN
        PERFORM pg_notify('coffer_invalidate', coffer_invalidate_payload(left(TG_TABLE_NAME, 1) || ':',
            NEW.tenant_id, NEW.id::text));
    END IF;
    RETURN NULL;
END
$$;

-- coffer_invalidate_payload renders one payload of the table above.
CREATE FUNCTION coffer_invalidate_payload(kind text, tenant text, id text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN kind = 'r' AND tenant = '' THEN 'r'
        WHEN kind = 'r' THEN 'r:' || tenant
        WHEN tenant = '' THEN kind || id
        ELSE kind || tenant || '/' || id
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

-- Usage: the size and count of each tenant's uploaded files, kept by the trigger below
-- in the transaction of every change to files (whatever statement makes it, the
-- one-statement upload commit included), and the quota check. The trigger's upsert
-- locks the tenant's usage row until the transaction ends, so concurrent commits of one
-- tenant take turns and each checks the total including every commit before it: they
-- cannot overshoot. A change that grows a tenant past its tenants row's max_bytes or
-- max_files fails with SQLSTATE CQ001 (EQUOTA to callers) and, being an error,
-- changes nothing. A shrinking change always passes, even over a quota lowered since.
CREATE TABLE tenant_usage (
    tenant_id text COLLATE "C" PRIMARY KEY,
    bytes     bigint NOT NULL DEFAULT 0,
    files     bigint NOT NULL DEFAULT 0
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
    mb bigint;
    mf bigint;
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
    INSERT INTO tenant_usage AS u (tenant_id, bytes, files) VALUES (tenant, db, df)
        ON CONFLICT (tenant_id) DO UPDATE SET bytes = u.bytes + EXCLUDED.bytes, files = u.files + EXCLUDED.files
        RETURNING u.bytes, u.files INTO ub, uf;
    IF db > 0 OR df > 0 THEN
        SELECT max_bytes, max_files INTO mb, mf FROM tenants WHERE id = tenant;
        IF db > 0 AND mb > 0 AND ub > mb THEN
            RAISE EXCEPTION 'tenant storage quota exceeded: the change would store % of % bytes', ub, mb
                USING ERRCODE = 'CQ001';
        END IF;
        IF df > 0 AND mf > 0 AND uf > mf THEN
            RAISE EXCEPTION 'tenant storage quota exceeded: the change would store % of % files', uf, mf
                USING ERRCODE = 'CQ001';
        END IF;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER files_usage AFTER INSERT OR UPDATE OF size, is_uploaded OR DELETE ON files
    FOR EACH ROW EXECUTE FUNCTION coffer_usage();
