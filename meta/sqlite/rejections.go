package sqlite

import (
	"context"
	"database/sql"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var _ meta.Rejections = (*Store)(nil)

// RecordRejection stores r and its file.rejected event in one transaction.
func (s *Store) RecordRejection(ctx context.Context, r *coffer.Rejection) error {
	r.Time = meta.Now()
	return s.writeEmit(ctx, "record rejection", func(tx *sql.Tx, emit emitFunc) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO upload_rejections
			(id, created_at, bucket_id, name, file_id, user_id, role, signature, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, micros(r.Time), r.BucketID, r.Name, r.FileID, r.UserID, r.Role, r.Signature, r.Size)
		if isUnique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "rejection %s already exists", r.ID)
		}
		if err != nil {
			return err
		}
		return emit(meta.RejectionEvent(r))
	})
}

// ListRejections returns the newest rejections first.
func (s *Store) ListRejections(ctx context.Context, limit int) ([]*coffer.Rejection, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, created_at, bucket_id, name, file_id, user_id, role, signature, size
		FROM upload_rejections ORDER BY created_at DESC, id DESC LIMIT ?`, meta.RejectionLimit(limit))
	if err != nil {
		return nil, dbErr(err, "list rejections")
	}
	defer rows.Close()
	out := []*coffer.Rejection{}
	for rows.Next() {
		var r coffer.Rejection
		var at int64
		if err := rows.Scan(&r.ID, &at, &r.BucketID, &r.Name, &r.FileID, &r.UserID, &r.Role, &r.Signature, &r.Size); err != nil {
			return nil, dbErr(err, "list rejections")
		}
		r.Time = fromMicros(at)
		out = append(out, &r)
	}
	return out, dbErr(rows.Err(), "list rejections")
}
