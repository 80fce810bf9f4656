package sqlcore

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/webhook/payload"
)

// RowWriter is an optional capability of a DB: it runs one writing statement that
// returns a row outside an explicit transaction (in the statement's own implicit one)
// and scans the row into dest. Over a network (PostgreSQL) that is one round trip where
// Tx costs at least three (BEGIN, the statement, COMMIT).
type RowWriter interface {
	WriteScan(ctx context.Context, query string, args []any, dest ...any) error
}

// createOneSQL returns the statement that commits one uploaded file where the dialect has
// WritableCTE: it deletes the upload's intent and, only if there was one, inserts the
// file row and, when a subscription wants file.created in its bucket, the event and its
// deliveries, all or nothing. The subscriptions are locked FOR KEY SHARE (as
// insertEvent's) so that one deleted meanwhile is skipped, not a foreign key error.
// Its row: intent found, event stored, and (for the error when the intent is missing,
// looked up only then: a subquery under CASE runs when its branch is taken) whether
// the file id is taken and whether the bucket exists. Arguments: createOneArgs.
func (s *Store) createOneSQL() string {
	ts := `CAST(? AS ` + s.d.TimeType + `)`
	txt := `CAST(? AS TEXT)`
	return `WITH intent AS (DELETE FROM upload_intents WHERE tenant_id = ? AND blob_key = ? RETURNING 1),
	file AS (INSERT INTO files (tenant_id, id, bucket_id, name, size, mime_type, etag, is_uploaded,
			uploaded_by_user_id, metadata, blob_key, created_at, updated_at)
		SELECT ` + txt + `, ` + s.d.UUIDArg + `, ` + txt + `, ` + txt + `, CAST(? AS BIGINT), ` + txt + `, ` + txt + `, ` + s.d.True + `,
			` + txt + `, ` + s.d.JSONArg + `, ` + txt + `, ` + ts + `, ` + ts + `
		WHERE EXISTS (SELECT 1 FROM intent) RETURNING 1),
	subs AS (SELECT id FROM webhook_subscriptions WHERE ` + s.subMatch() + s.d.KeyShare + `),
	event AS (INSERT INTO webhook_events (tenant_id, id, type, bucket_id, payload, created_at)
		SELECT ` + txt + `, ` + txt + `, ` + txt + `, ` + txt + `, ` + txt + `, ` + ts + `
		WHERE EXISTS (SELECT 1 FROM file) AND EXISTS (SELECT 1 FROM subs) RETURNING id),
	delivery AS (INSERT INTO webhook_deliveries
			(tenant_id, subscription_id, event_id, event_type, state, attempts, next_at, created_at, updated_at)
		SELECT ` + txt + `, subs.id, event.id, ` + txt + `, 'pending', 0, ` + ts + `, ` + ts + `, ` + ts + ` FROM subs, event)
	SELECT EXISTS (SELECT 1 FROM intent), EXISTS (SELECT 1 FROM event),
		CASE WHEN EXISTS (SELECT 1 FROM intent) THEN FALSE
			ELSE EXISTS (SELECT 1 FROM files WHERE tenant_id = ? AND id = ` + s.d.UUIDArg + `) END,
		CASE WHEN EXISTS (SELECT 1 FROM intent) THEN TRUE
			ELSE EXISTS (SELECT 1 FROM buckets WHERE tenant_id = ? AND id = ?) END`
}

// createOneArgs are createOneSQL's arguments for row (prepared by meta.PrepareInsert)
// and its file.created event ev.
func (s *Store) createOneArgs(row *coffer.File, ev *coffer.Event) ([]any, error) {
	body, err := payload.Encode(ev)
	if err != nil {
		return nil, err
	}
	at, evAt := s.d.Time(row.CreatedAt), s.d.Time(ev.Time)
	t := s.tenant
	return []any{t, row.BlobKey,
		t, row.ID, row.BucketID, row.Name, row.Size, row.MimeType, row.ETag, row.UploadedByUserID,
		string(row.Metadata), row.BlobKey, at, at,
		t, ev.BucketID, meta.EventTypeNeedle(ev.Type),
		t, ev.ID, string(ev.Type), ev.BucketID, string(body), evAt,
		t, string(ev.Type), evAt, evAt, evAt,
		t, row.ID, t, row.BucketID}, nil
}

// createOne commits one uploaded file with createOneSQL through scan (a transaction's
// QueryRow or the DB's WriteScan) and reports whether an event was stored. Errors are
// CreateFiles': ECONFLICT (id taken), ENOTFOUND (no bucket), EABORTED (no intent).
func (s *Store) createOne(ctx context.Context, scan func(q string, args []any, dest ...any) error, row *coffer.File, now time.Time) (bool, error) {
	args, err := s.createOneArgs(row, meta.FileEvent(ctx, coffer.FileCreated, nil, row, now))
	if err != nil {
		return false, err
	}
	var intent, stored, taken, bucket bool
	err = scan(s.createOneQ, args, &intent, &stored, &taken, &bucket)
	switch {
	case s.d.Unique(err) || err == nil && !intent && taken:
		return false, coffer.Errorf(coffer.ECONFLICT, "file %s already exists", row.ID)
	case s.d.ForeignKey(err) || err == nil && !intent && !bucket:
		return false, bucketNotFound(row.BucketID)
	case err == nil && !intent:
		return false, errNoIntent()
	}
	return stored, err
}

// createFilesOne is CreateFiles where the dialect has WritableCTE and the DB is a
// RowWriter: one statement per file, and no transaction around a single file.
func (s *Store) createFilesOne(ctx context.Context, rw RowWriter, rows []*coffer.File, now time.Time) error {
	stored := false
	if len(rows) == 1 {
		scan := func(q string, args []any, dest ...any) error { return rw.WriteScan(ctx, q, args, dest...) }
		ok, err := s.createOne(ctx, scan, rows[0], now)
		if err != nil {
			return s.err(err, "create files")
		}
		stored = ok
	} else {
		err := s.write(ctx, "create files", func(tx Querier) error {
			stored = false // a DB may retry fn
			scan := func(q string, args []any, dest ...any) error { return tx.QueryRow(ctx, q, args...).Scan(dest...) }
			for _, row := range rows {
				ok, err := s.createOne(ctx, scan, row, now)
				if err != nil {
					return err
				}
				stored = stored || ok
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if stored {
		s.fireEvent()
	}
	return nil
}
