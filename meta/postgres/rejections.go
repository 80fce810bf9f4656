package postgres

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

var _ meta.Rejections = (*Store)(nil)

// RecordRejection stores r and its file.rejected event in one transaction.
func (s *Store) RecordRejection(ctx context.Context, r *coffer.Rejection) error {
	r.Time = meta.Now()
	return s.txEmit(ctx, "record rejection", func(tx pgx.Tx, emit emitFunc) error {
		_, err := tx.Exec(ctx, `INSERT INTO upload_rejections
			(id, created_at, bucket_id, name, file_id, user_id, role, signature, size) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			r.ID, r.Time, r.BucketID, r.Name, r.FileID, r.UserID, r.Role, r.Signature, r.Size)
		if pgCode(err) == uniqueViolation {
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
	rows, err := s.pool.Query(ctx, `SELECT id, created_at, bucket_id, name, file_id, user_id, role, signature, size
		FROM upload_rejections ORDER BY created_at DESC, id DESC LIMIT $1`, meta.RejectionLimit(limit))
	if err != nil {
		return nil, dbErr(err, "list rejections")
	}
	defer rows.Close()
	out := []*coffer.Rejection{}
	for rows.Next() {
		var r coffer.Rejection
		if err := rows.Scan(&r.ID, &r.Time, &r.BucketID, &r.Name, &r.FileID, &r.UserID, &r.Role, &r.Signature, &r.Size); err != nil {
			return nil, dbErr(err, "list rejections")
		}
		r.Time = r.Time.UTC()
		out = append(out, &r)
	}
	return out, dbErr(rows.Err(), "list rejections")
}
