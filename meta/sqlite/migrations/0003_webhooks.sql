-- Webhooks: subscriptions, and the transactional outbox. An event row and one delivery
-- row per matching subscription are written in the same transaction as the change
-- they describe (see meta.Outbox).
CREATE TABLE webhook_subscriptions (
    id          TEXT    NOT NULL PRIMARY KEY,
    bucket_id   TEXT    NOT NULL DEFAULT '', -- '' for every bucket
    event_types TEXT    NOT NULL DEFAULT '', -- '' for every type, else ",a,b,"
    url         TEXT    NOT NULL,
    secret      TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE webhook_events (
    id         TEXT    NOT NULL PRIMARY KEY,
    type       TEXT    NOT NULL,
    bucket_id  TEXT    NOT NULL,
    payload    TEXT    NOT NULL, -- the JSON body sent to receivers, byte for byte
    created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE webhook_deliveries (
    id              INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    subscription_id TEXT    NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        TEXT    NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event_type      TEXT    NOT NULL,
    state           TEXT    NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at         INTEGER NOT NULL, -- due time, or lease end while an attempt runs
    claimed         INTEGER NOT NULL DEFAULT 0, -- 1 while an attempt runs (leased)
    claims          INTEGER NOT NULL DEFAULT 0, -- claim generation: an outcome applies only to its own claim
    last_status     INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    UNIQUE (subscription_id, event_id)
) STRICT;

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries (subscription_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (updated_at) WHERE state <> 'pending';
