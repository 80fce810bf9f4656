package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// RecordRejection stores r and its file.rejected event in one transaction.
func (s *Store) RecordRejection(ctx context.Context, r *coffer.Rejection) error {
	r.Time = meta.Now()
	return s.writeEmit(ctx, "record rejection", func(tx Querier, emit emitFunc) error {
		_, err := tx.Exec(ctx, `INSERT INTO upload_rejections (tenant_id, id, created_at, bucket_id, name,
			file_id, user_id, role, signature, size) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.tenant, r.ID, s.d.Time(r.Time), r.BucketID, r.Name, r.FileID, r.UserID, r.Role, r.Signature, r.Size)
		if s.d.Unique(err) {
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
	rows, err := s.db.Query(ctx, `SELECT id, created_at, bucket_id, name, file_id, user_id, role, signature, size
		FROM upload_rejections WHERE tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`,
		s.tenant, meta.RejectionLimit(limit))
	out, err := Collect(rows, err, func(r Row) (*coffer.Rejection, error) {
		var rj coffer.Rejection
		err := r.Scan(&rj.ID, Time{&rj.Time}, &rj.BucketID, &rj.Name, &rj.FileID, &rj.UserID, &rj.Role,
			&rj.Signature, &rj.Size)
		return &rj, err
	})
	return out, s.err(err, "list rejections")
}
