-- Uploads refused by the virus scanner (meta.Rejections); the file.rejected event is
-- written in the same transaction.
CREATE TABLE upload_rejections (
    id         TEXT    NOT NULL PRIMARY KEY,
    created_at INTEGER NOT NULL,
    bucket_id  TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    file_id    TEXT    NOT NULL DEFAULT '', -- '' when none was given
    user_id    TEXT    NOT NULL DEFAULT '',
    role       TEXT    NOT NULL,
    signature  TEXT    NOT NULL,
    size       INTEGER NOT NULL -- bytes read before the verdict
) STRICT;

CREATE INDEX upload_rejections_newest ON upload_rejections (created_at DESC, id DESC);
