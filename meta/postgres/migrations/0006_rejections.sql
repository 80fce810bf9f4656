-- Uploads refused by the virus scanner (meta.Rejections); the file.rejected event is
-- written in the same transaction.
CREATE TABLE upload_rejections (
    id         text        PRIMARY KEY,
    created_at timestamptz NOT NULL,
    bucket_id  text        NOT NULL,
    name       text        NOT NULL,
    file_id    text        NOT NULL DEFAULT '', -- '' when none was given
    user_id    text        NOT NULL DEFAULT '',
    role       text        NOT NULL,
    signature  text        NOT NULL,
    size       bigint      NOT NULL -- bytes read before the verdict
);

CREATE INDEX upload_rejections_newest ON upload_rejections (created_at DESC, id DESC);
