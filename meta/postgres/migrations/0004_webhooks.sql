-- Webhooks: subscriptions, and the transactional outbox. An event row and one delivery
-- row per matching subscription are written in the same transaction as the change
-- they describe (see meta.Outbox). Deliveries are claimed with FOR UPDATE SKIP LOCKED,
-- so several nodes share the work without sending an event twice.
CREATE TABLE webhook_subscriptions (
    id          text        PRIMARY KEY,
    bucket_id   text COLLATE "C" NOT NULL DEFAULT '', -- '' for every bucket
    event_types text        NOT NULL DEFAULT '',      -- '' for every type, else ",a,b,"
    url         text        NOT NULL,
    secret      text        NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE TABLE webhook_events (
    id         text        PRIMARY KEY,
    type       text        NOT NULL,
    bucket_id  text        NOT NULL,
    payload    text        NOT NULL, -- the JSON body sent to receivers, byte for byte
    created_at timestamptz NOT NULL
);

CREATE TABLE webhook_deliveries (
    id              bigserial   PRIMARY KEY,
    subscription_id text        NOT NULL REFERENCES webhook_subscriptions (id) ON DELETE CASCADE,
    event_id        text        NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
    event_type      text        NOT NULL,
    state           text        NOT NULL DEFAULT 'pending',
    attempts        integer     NOT NULL DEFAULT 0,
    next_at         timestamptz NOT NULL, -- due time, or lease end while an attempt runs
    claimed         boolean     NOT NULL DEFAULT false, -- while an attempt runs (leased)
    claims          integer     NOT NULL DEFAULT 0,     -- claim generation: an outcome applies only to its own claim
    last_status     integer     NOT NULL DEFAULT 0,
    last_error      text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    UNIQUE (subscription_id, event_id)
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_sub ON webhook_deliveries (subscription_id, id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (updated_at) WHERE state <> 'pending';
