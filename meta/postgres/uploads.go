package postgres

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

// BeginUpload records the intent to write blobKey and, when f is non-nil, inserts f
// (IsUploaded false, BlobKey = blobKey) in the same transaction.
func (s *Store) BeginUpload(ctx context.Context, blobKey string, f *coffer.File) error {
	if blobKey == "" {
		return coffer.Errorf(coffer.EINVALID, "empty blob key")
	}
	now := meta.Now()
	var row *coffer.File
	if f != nil {
		var err error
		if row, err = meta.PrepareInsert(f, now); err != nil {
			return err
		}
		row.BlobKey, row.IsUploaded = blobKey, false
	}
	err := s.tx(ctx, "begin upload", func(tx pgx.Tx) error {
		fileID := ""
		if row != nil {
			if err := insertFile(ctx, tx, row); err != nil {
				return err
			}
			fileID = row.ID
		}
		return insertIntent(ctx, tx, blobKey, fileID, now)
	})
	if err == nil && f != nil {
		*f = *row
	}
	return err
}

func insertIntent(ctx context.Context, tx pgx.Tx, blobKey, fileID string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO upload_intents (blob_key, file_id, created_at) VALUES ($1, $2, $3)`,
		blobKey, fileID, now)
	if pgCode(err) == uniqueViolation {
		return coffer.Errorf(coffer.ECONFLICT, "an upload of this blob key is already in progress")
	}
	return err
}

// deleteIntent removes the intent for blobKey: ECONFLICT if there is none (the upload
// was swept as abandoned and its blob may be gone).
func deleteIntent(ctx context.Context, tx pgx.Tx, blobKey string) error {
	tag, err := tx.Exec(ctx, `DELETE FROM upload_intents WHERE blob_key = $1`, blobKey)
	if err == nil && tag.RowsAffected() == 0 {
		err = coffer.Errorf(coffer.ECONFLICT, "the upload was abandoned (no upload intent for its blob); retry")
	}
	return err
}

// CommitUpload applies u to file id, bumps UpdatedAt and removes the intent for
// blobKey in one transaction. ENOTFOUND if the file is gone; ECONFLICT if u.IfBlobKey
// differs or if the intent is gone. The row is locked, so concurrent commits with the
// same IfBlobKey serialise and only the first succeeds.
func (s *Store) CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (before, after *coffer.File, err error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, nil, fileNotFound(id)
	}
	err = s.txEmit(ctx, "commit upload", func(tx pgx.Tx, emit emitFunc) error {
		var err error
		if before, err = getFile(ctx, tx, cid, " FOR UPDATE"); err != nil {
			return err
		}
		if after, err = meta.ApplyUpdate(before, u, meta.Now()); err != nil {
			return err
		}
		if err := deleteIntent(ctx, tx, blobKey); err != nil {
			return err
		}
		if err := updateFile(ctx, tx, after); err != nil {
			return err
		}
		return emit(meta.ReplaceEvent(ctx, before, after, after.UpdatedAt))
	})
	if err != nil {
		return nil, nil, err
	}
	return before, after, nil
}

// CreateFiles inserts already-uploaded files and removes their intents, all or none.
func (s *Store) CreateFiles(ctx context.Context, files []*coffer.File) error {
	if len(files) == 0 {
		return nil
	}
	now := meta.Now()
	rows := make([]*coffer.File, len(files))
	for i, f := range files {
		row, err := meta.PrepareInsert(f, now)
		if err != nil {
			return err
		}
		row.IsUploaded = true
		rows[i] = row
	}
	err := s.txEmit(ctx, "create files", func(tx pgx.Tx, emit emitFunc) error {
		for _, row := range rows {
			if err := insertFile(ctx, tx, row); err != nil {
				return err
			}
			if err := deleteIntent(ctx, tx, row.BlobKey); err != nil {
				return err
			}
			if err := emit(meta.FileEvent(ctx, coffer.FileCreated, nil, row, now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for i, f := range files {
			*f = *rows[i]
		}
	}
	return err
}

// AbortUpload removes the intent for blobKey and a not-yet-uploaded row pointing at it.
func (s *Store) AbortUpload(ctx context.Context, blobKey string) error {
	return s.tx(ctx, "abort upload", func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM upload_intents WHERE blob_key = $1`, blobKey); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM files WHERE blob_key = $1 AND NOT is_uploaded`, blobKey)
		return err
	})
}

// StaleIntents returns intents created before olderThan, oldest first.
func (s *Store) StaleIntents(ctx context.Context, olderThan time.Time) ([]meta.Intent, error) {
	rows, err := s.pool.Query(ctx, `SELECT blob_key, file_id, created_at FROM upload_intents
		WHERE created_at < $1 ORDER BY created_at, blob_key`, olderThan)
	if err != nil {
		return nil, dbErr(err, "list stale intents")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (meta.Intent, error) {
		var in meta.Intent
		err := r.Scan(&in.BlobKey, &in.FileID, &in.CreatedAt)
		in.CreatedAt = in.CreatedAt.UTC()
		return in, err
	})
	if err != nil {
		return nil, dbErr(err, "list stale intents")
	}
	return out, nil
}

// BlobReferenced reports whether blobKey is referenced by a file row or an intent.
func (s *Store) BlobReferenced(ctx context.Context, blobKey string) (bool, error) {
	var ref bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE blob_key = $1)
		OR EXISTS (SELECT 1 FROM upload_intents WHERE blob_key = $1)`, blobKey).Scan(&ref)
	return ref, dbErr(err, "check blob reference")
}
