-- The permission rules document (one row), so admin routes can change rules at run time.
CREATE TABLE rules (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    document   TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
