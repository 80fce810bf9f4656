-- The permission rules document (one row), so admin routes can change rules at run time.
-- text, not jsonb: the document is kept exactly as validated.
CREATE TABLE rules (
    id         integer     PRIMARY KEY CHECK (id = 1),
    document   text        NOT NULL,
    updated_at timestamptz NOT NULL
);
