package sqlcore

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// fileCols lists a file row's columns in d, metadata read as text.
func fileCols(d *Dialect) string {
	return `id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, ` +
		d.JSONText("metadata") + `, blob_key, created_at, updated_at`
}

// eachBatch is how many rows EachFile reads per query; no connection is held while fn
// runs, so fn may call the store.
const eachBatch = 256

// scanFile reads a row of fileCols. Metadata is compacted: an engine that stores JSON
// in a binary form prints it with spaces.
func scanFile(r Row) (*coffer.File, error) {
	var f coffer.File
	var md []byte
	err := r.Scan(&f.ID, &f.BucketID, &f.Name, &f.Size, &f.MimeType, &f.ETag, &f.IsUploaded,
		&f.UploadedByUserID, &md, &f.BlobKey, Time{&f.CreatedAt}, Time{&f.UpdatedAt})
	if err != nil {
		return nil, err
	}
	f.Metadata = md
	if bytes.ContainsAny(md, " \t\r\n") { // compact already when it has no whitespace
		var buf bytes.Buffer
		buf.Grow(len(md))
		if err := json.Compact(&buf, md); err != nil {
			return nil, err
		}
		f.Metadata = buf.Bytes()
	}
	return &f, nil
}

func fileNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "file %s not found", id)
}

// insertFile inserts f: ECONFLICT if its id exists, ENOTFOUND if its bucket does not.
func (s *Store) insertFile(ctx context.Context, tx Querier, f *coffer.File) error {
	_, err := tx.Exec(ctx, `INSERT INTO files (tenant_id, id, bucket_id, name, size, mime_type, etag, is_uploaded,
		uploaded_by_user_id, metadata, blob_key, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, `+s.d.JSONArg+`, ?, ?, ?)`,
		s.tenant, f.ID, f.BucketID, f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, f.UploadedByUserID,
		string(f.Metadata), f.BlobKey, s.d.Time(f.CreatedAt), s.d.Time(f.UpdatedAt))
	switch {
	case s.d.Unique(err):
		return coffer.Errorf(coffer.ECONFLICT, "file %s already exists", f.ID)
	case s.d.ForeignKey(err):
		return bucketNotFound(f.BucketID)
	}
	return err
}

// updateFile writes every mutable column of f.
func (s *Store) updateFile(ctx context.Context, tx Querier, f *coffer.File) error {
	_, err := tx.Exec(ctx, `UPDATE files SET name = ?, size = ?, mime_type = ?, etag = ?,
		is_uploaded = ?, metadata = `+s.d.JSONArg+`, blob_key = ?, updated_at = ? WHERE tenant_id = ? AND id = ?`,
		f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, string(f.Metadata), f.BlobKey,
		s.d.Time(f.UpdatedAt), s.tenant, f.ID)
	return err
}

// GetFile returns ENOTFOUND if there is no such file (uploaded or not).
func (s *Store) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	return s.getFile(ctx, s.db, cid, "")
}

// getFile reads file id (canonical); lock is "" or s.d.ForUpdate.
func (s *Store) getFile(ctx context.Context, q Querier, id, lock string) (*coffer.File, error) {
	f, err := scanFile(q.QueryRow(ctx, `SELECT `+s.fileCols+` FROM files WHERE tenant_id = ? AND id = ?`+lock,
		s.tenant, id))
	if IsNoRows(err) {
		return nil, fileNotFound(id)
	}
	return f, s.err(err, "get file")
}

// UpdateFile applies u, bumps UpdatedAt, returns the new row. ENOTFOUND if missing;
// ECONFLICT if u.IfBlobKey is set and differs.
func (s *Store) UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	var after *coffer.File
	err := s.writeEmit(ctx, "update file", func(tx Querier, emit emitFunc) error {
		before, err := s.getFile(ctx, tx, cid, s.d.ForUpdate)
		if err != nil {
			return err
		}
		if after, err = meta.ApplyUpdate(before, u, meta.Now()); err != nil {
			return err
		}
		if err := s.updateFile(ctx, tx, after); err != nil {
			return err
		}
		return emit(meta.FileEvent(ctx, coffer.FileMetadataUpdated, before, after, after.UpdatedAt))
	})
	if err != nil {
		return nil, err
	}
	return after, nil
}

// DeleteFile removes the row and returns it. ENOTFOUND if missing.
func (s *Store) DeleteFile(ctx context.Context, id string) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	var f *coffer.File
	err := s.writeEmit(ctx, "delete file", func(tx Querier, emit emitFunc) error {
		var err error
		f, err = scanFile(tx.QueryRow(ctx, `DELETE FROM files WHERE tenant_id = ? AND id = ? RETURNING `+s.fileCols,
			s.tenant, cid))
		if IsNoRows(err) {
			return fileNotFound(id)
		}
		if err != nil || !f.IsUploaded {
			return err
		}
		return emit(meta.FileEvent(ctx, coffer.FileDeleted, f, nil, meta.Now()))
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}
