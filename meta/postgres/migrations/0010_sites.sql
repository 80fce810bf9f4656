-- Sites (meta.Sites, meta.SiteRegistry): a tenant's web sites, each with its document
-- (package site's JSON, opaque here) and the host names it answers. A host belongs to
-- one site of one tenant (site_hosts' key) and is never a tenant's API host
-- (tenant_hosts): a transaction that gives hosts to a tenant or a site holds an
-- advisory lock (the store's hostLock) while it checks the other table and inserts.
CREATE TABLE sites (
    tenant_id  text COLLATE "C" NOT NULL, -- '' for the default tenant
    id         text COLLATE "C" NOT NULL,
    doc        bytea       NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE site_hosts (
    host      text COLLATE "C" PRIMARY KEY,
    tenant_id text COLLATE "C" NOT NULL,
    site_id   text COLLATE "C" NOT NULL,
    FOREIGN KEY (tenant_id, site_id) REFERENCES sites (tenant_id, id) ON DELETE CASCADE
);

CREATE INDEX site_hosts_site ON site_hosts (tenant_id, site_id);

-- "s:<tenant>" on coffer_invalidate on every change to a tenant's sites or their hosts
-- ("s:" for the default tenant's): every node rebuilds its host -> site map (see the
-- payloads in 0009_tenants.sql; a reader that does not know "s:" flushes everything,
-- which is safe). NOTIFY folds a transaction's equal payloads into one.
CREATE FUNCTION coffer_notify_site() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        PERFORM pg_notify('coffer_invalidate', 's:' || OLD.tenant_id);
    END IF;
    IF TG_OP <> 'DELETE' THEN
        PERFORM pg_notify('coffer_invalidate', 's:' || NEW.tenant_id);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER sites_invalidate AFTER INSERT OR UPDATE OR DELETE ON sites
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_site();
CREATE TRIGGER site_hosts_invalidate AFTER INSERT OR UPDATE OR DELETE ON site_hosts
    FOR EACH ROW EXECUTE FUNCTION coffer_notify_site();
CREATE TRIGGER sites_truncate_invalidate AFTER TRUNCATE ON sites
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
CREATE TRIGGER site_hosts_truncate_invalidate AFTER TRUNCATE ON site_hosts
    FOR EACH STATEMENT EXECUTE FUNCTION coffer_notify_flush();
