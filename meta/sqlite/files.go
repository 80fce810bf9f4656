package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const fileCols = `id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id,
	metadata, blob_key, created_at, updated_at`

// eachBatch is how many rows EachFile reads per query; no connection is held while fn
// runs, so fn may call the store.
const eachBatch = 256

func scanFile(r scanner) (*coffer.File, error) {
	var f coffer.File
	var md string
	var created, updated int64
	err := r.Scan(&f.ID, &f.BucketID, &f.Name, &f.Size, &f.MimeType, &f.ETag, &f.IsUploaded,
		&f.UploadedByUserID, &md, &f.BlobKey, &created, &updated)
	if err != nil {
		return nil, err
	}
	f.Metadata = json.RawMessage(md)
	f.CreatedAt, f.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &f, nil
}

func scanFiles(rows *sql.Rows, err error) ([]*coffer.File, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*coffer.File{}
	for rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

func fileNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "file %s not found", id)
}

func insertFile(ctx context.Context, tx *sql.Tx, f *coffer.File) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO files (`+fileCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		f.ID, f.BucketID, f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, f.UploadedByUserID,
		string(f.Metadata), f.BlobKey, micros(f.CreatedAt), micros(f.UpdatedAt))
	switch {
	case isUnique(err):
		return coffer.Errorf(coffer.ECONFLICT, "file %s already exists", f.ID)
	case isForeignKey(err):
		return bucketNotFound(f.BucketID)
	}
	return err
}

func updateFile(ctx context.Context, tx *sql.Tx, f *coffer.File) error {
	_, err := tx.ExecContext(ctx, `UPDATE files SET name = ?, size = ?, mime_type = ?, etag = ?,
		is_uploaded = ?, metadata = ?, blob_key = ?, updated_at = ? WHERE id = ?`,
		f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, string(f.Metadata), f.BlobKey,
		micros(f.UpdatedAt), f.ID)
	return err
}

// GetFile returns ENOTFOUND if there is no such file (uploaded or not).
func (s *Store) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	return getFile(ctx, s.db, cid)
}

func getFile(ctx context.Context, q queryer, id string) (*coffer.File, error) {
	f, err := scanFile(q.QueryRowContext(ctx, `SELECT `+fileCols+` FROM files WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fileNotFound(id)
	}
	return f, dbErr(err, "get file")
}

// UpdateFile applies u, bumps UpdatedAt, returns the new row. ENOTFOUND if missing;
// ECONFLICT if u.IfBlobKey is set and differs.
func (s *Store) UpdateFile(ctx context.Context, id string, u coffer.FileUpdate) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	var after *coffer.File
	err := s.writeEmit(ctx, "update file", func(tx *sql.Tx, emit emitFunc) error {
		before, err := getFile(ctx, tx, cid)
		if err != nil {
			return err
		}
		if after, err = meta.ApplyUpdate(before, u, meta.Now()); err != nil {
			return err
		}
		if err := updateFile(ctx, tx, after); err != nil {
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
	err := s.writeEmit(ctx, "delete file", func(tx *sql.Tx, emit emitFunc) error {
		var err error
		f, err = scanFile(tx.QueryRowContext(ctx, `DELETE FROM files WHERE id = ? RETURNING `+fileCols, cid))
		if errors.Is(err, sql.ErrNoRows) {
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

// ListFiles returns a page of uploaded files of opt.BucketID whose name starts with
// opt.Prefix (taken literally), ordered by (name, id).
func (s *Store) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	limit := meta.ListLimit(opt.Limit)
	q := `SELECT ` + fileCols + ` FROM files WHERE bucket_id = ? AND is_uploaded = 1`
	args := []any{opt.BucketID}
	if opt.Prefix != "" {
		q += ` AND name >= ? AND substr(name, 1, length(?)) = ?`
		args = append(args, opt.Prefix, opt.Prefix, opt.Prefix)
	}
	if opt.Cursor != "" {
		name, id, err := meta.DecodeCursor(opt.Cursor)
		if err != nil {
			return coffer.Page{}, err
		}
		q += ` AND (name, id) > (?, ?)`
		args = append(args, name, id)
	}
	if opt.Filter != nil {
		q += ` AND ` + meta.FilterSQL(opt.Filter, opt.Vars, dialect(&args))
	}
	q += ` ORDER BY name, id LIMIT ?`
	files, err := scanFiles(s.db.QueryContext(ctx, q, append(args, limit+1)...))
	if err != nil {
		return coffer.Page{}, dbErr(err, "list files")
	}
	page := coffer.Page{Files: files}
	if len(files) > limit {
		page.Files = files[:limit]
		last := files[limit-1]
		page.Next = meta.EncodeCursor(last.Name, last.ID)
	}
	return page, nil
}

// ListNotUploaded returns files with IsUploaded false, oldest first, at most limit
// (clamped like ListOptions.Limit).
func (s *Store) ListNotUploaded(ctx context.Context, limit int) ([]*coffer.File, error) {
	files, err := scanFiles(s.db.QueryContext(ctx, `SELECT `+fileCols+` FROM files
		WHERE is_uploaded = 0 ORDER BY created_at, id LIMIT ?`, meta.ListLimit(limit)))
	return files, dbErr(err, "list not uploaded files")
}

// EachFile calls fn for every file row in id order, stopping at the first error fn
// returns (and returning it unchanged).
func (s *Store) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	last := ""
	for {
		files, err := scanFiles(s.db.QueryContext(ctx, `SELECT `+fileCols+` FROM files
			WHERE id > ? ORDER BY id LIMIT ?`, last, eachBatch))
		if err != nil {
			return dbErr(err, "list files")
		}
		for _, f := range files {
			if err := fn(f); err != nil {
				return err
			}
		}
		if len(files) < eachBatch {
			return nil
		}
		last = files[len(files)-1].ID
	}
}
