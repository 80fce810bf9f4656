package sqlcore

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// BeginUpload records the intent to write blobKey and, when f is non-nil, inserts f
// (IsUploaded false, BlobKey = blobKey) in the same transaction.
func (s *Store) BeginUpload(ctx context.Context, blobKey string, f *coffer.File) error {
	if blobKey == "" {
		return coffer.Errorf(coffer.EINVALID, "empty blob key")
	}
	now := meta.Now()
	if f == nil { // one statement: no transaction round trips (BEGIN, COMMIT) around it
		return s.err(s.insertIntent(ctx, s.db.Write, blobKey, "", now), "begin upload")
	}
	row, err := meta.PrepareInsert(f, now)
	if err != nil {
		return err
	}
	row.BlobKey, row.IsUploaded = blobKey, false
	err = s.write(ctx, "begin upload", func(tx Querier) error {
		if err := s.insertFile(ctx, tx, row); err != nil {
			return err
		}
		return s.insertIntent(ctx, tx.Exec, blobKey, row.ID, now)
	})
	if err == nil {
		*f = *row
	}
	return err
}

// insertIntent records an upload of blobKey with exec (a transaction's, or the
// store's own one-statement Write): ECONFLICT if one is in progress.
func (s *Store) insertIntent(ctx context.Context, exec func(context.Context, string, ...any) (int64, error), blobKey, fileID string, now time.Time) error {
	_, err := exec(ctx, `INSERT INTO upload_intents (tenant_id, blob_key, file_id, created_at) VALUES (?, ?, ?, ?)`,
		s.tenant, blobKey, fileID, s.d.Time(now))
	if s.d.Unique(err) {
		return coffer.Errorf(coffer.ECONFLICT, "an upload of this blob key is already in progress")
	}
	return err
}

// deleteIntent removes the intent for blobKey: EABORTED if there is none (the upload
// was swept as abandoned and its blob may be gone).
func (s *Store) deleteIntent(ctx context.Context, tx Querier, blobKey string) error {
	n, err := tx.Exec(ctx, `DELETE FROM upload_intents WHERE tenant_id = ? AND blob_key = ?`, s.tenant, blobKey)
	if err == nil && n == 0 {
		err = errNoIntent()
	}
	return err
}

// errNoIntent is the EABORTED of a commit whose upload intent is gone.
func errNoIntent() error {
	return coffer.Errorf(coffer.EABORTED, "the upload was abandoned (no upload intent for its blob); retry")
}

// CommitUpload applies u to file id, bumps UpdatedAt and removes the intent for
// blobKey in one transaction. ENOTFOUND if the file is gone; EABORTED if u.IfBlobKey
// differs or if the intent is gone. The row is locked (or writers are serialised), so
// concurrent commits with the same IfBlobKey run one after the other and only the first
// succeeds.
func (s *Store) CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (before, after *coffer.File, err error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, nil, fileNotFound(id)
	}
	err = s.writeEmit(ctx, "commit upload", func(tx Querier, emit emitFunc) error {
		var err error
		if before, err = s.getFile(ctx, tx, cid, s.d.ForUpdate); err != nil {
			return err
		}
		if after, err = meta.ApplyUpdate(before, u, meta.Now()); err != nil {
			return err
		}
		if err := s.deleteIntent(ctx, tx, blobKey); err != nil {
			return err
		}
		if err := s.updateFile(ctx, tx, after); err != nil {
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
	var err error
	if s.rowWriter != nil {
		err = s.createFilesOne(ctx, s.rowWriter, rows, now)
	} else {
		err = s.createFilesTx(ctx, rows, now)
	}
	if err == nil {
		for i, f := range files {
			*f = *rows[i]
		}
	}
	return err
}

// createFilesTx is CreateFiles in one transaction of several statements per file.
func (s *Store) createFilesTx(ctx context.Context, rows []*coffer.File, now time.Time) error {
	return s.writeEmit(ctx, "create files", func(tx Querier, emit emitFunc) error {
		for _, row := range rows {
			if err := s.insertFile(ctx, tx, row); err != nil {
				return err
			}
			if err := s.deleteIntent(ctx, tx, row.BlobKey); err != nil {
				return err
			}
			if err := emit(meta.FileEvent(ctx, coffer.FileCreated, nil, row, now)); err != nil {
				return err
			}
		}
		return nil
	})
}

// AbortUpload removes the intent for blobKey and a not-yet-uploaded row pointing at it.
func (s *Store) AbortUpload(ctx context.Context, blobKey string) error {
	return s.write(ctx, "abort upload", func(tx Querier) error {
		_, err := tx.Exec(ctx, `DELETE FROM upload_intents WHERE tenant_id = ? AND blob_key = ?`, s.tenant, blobKey)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM files WHERE tenant_id = ? AND blob_key = ? AND is_uploaded = `+s.d.False,
			s.tenant, blobKey)
		return err
	})
}

// StaleIntents returns intents created before olderThan, oldest first.
func (s *Store) StaleIntents(ctx context.Context, olderThan time.Time) ([]meta.Intent, error) {
	rows, err := s.db.Query(ctx, `SELECT blob_key, file_id, created_at FROM upload_intents
		WHERE tenant_id = ? AND created_at < ? ORDER BY created_at, blob_key`, s.tenant, s.d.Time(olderThan))
	out, err := Collect(rows, err, func(r Row) (meta.Intent, error) {
		var in meta.Intent
		err := r.Scan(&in.BlobKey, &in.FileID, Time{&in.CreatedAt})
		return in, err
	})
	return out, s.err(err, "list stale intents")
}

// BlobReferenced reports whether blobKey is referenced by a file row or an intent.
func (s *Store) BlobReferenced(ctx context.Context, blobKey string) (bool, error) {
	var ref bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE tenant_id = ? AND blob_key = ?)
		OR EXISTS (SELECT 1 FROM upload_intents WHERE tenant_id = ? AND blob_key = ?)`,
		s.tenant, blobKey, s.tenant, blobKey).Scan(&ref)
	return ref, s.err(err, "check blob reference")
}
