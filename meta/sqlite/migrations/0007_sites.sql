-- Sites (meta.Sites, meta.SiteRegistry): a tenant's web sites, each with its document
-- (package site's JSON, opaque here) and the host names it answers. A host belongs to
-- one site of one tenant (site_hosts' key) and is never a tenant's API host
-- (tenant_hosts): the store checks the other table before taking a host, SQLite's
-- one writer keeping the check and the insert together.
CREATE TABLE sites (
    tenant_id  TEXT    NOT NULL, -- '' for the default tenant
    id         TEXT    NOT NULL,
    doc        BLOB    NOT NULL,
    created_at INTEGER NOT NULL, -- Unix microseconds, UTC
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, id)
) STRICT;

CREATE TABLE site_hosts (
    host      TEXT NOT NULL PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    site_id   TEXT NOT NULL,
    FOREIGN KEY (tenant_id, site_id) REFERENCES sites (tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE INDEX site_hosts_site ON site_hosts (tenant_id, site_id);
