package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

const fileCols = `id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id,
	metadata::text, blob_key, created_at, updated_at`

// eachBatch is how many rows EachFile reads per query; no connection is held while fn
// runs, so fn may call the store.
const eachBatch = 256

func scanFile(r pgx.Row) (*coffer.File, error) {
	var f coffer.File
	var md []byte
	err := r.Scan(&f.ID, &f.BucketID, &f.Name, &f.Size, &f.MimeType, &f.ETag, &f.IsUploaded,
		&f.UploadedByUserID, &md, &f.BlobKey, &f.CreatedAt, &f.UpdatedAt)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, md); err != nil { // jsonb prints spaces; keep the stores alike
		return nil, err
	}
	f.Metadata = buf.Bytes()
	f.CreatedAt, f.UpdatedAt = f.CreatedAt.UTC(), f.UpdatedAt.UTC()
	return &f, nil
}

func collectFiles(rows pgx.Rows, err error) ([]*coffer.File, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*coffer.File, error) { return scanFile(r) })
}

func fileNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "file %s not found", id)
}

func insertFile(ctx context.Context, tx pgx.Tx, f *coffer.File) error {
	_, err := tx.Exec(ctx, `INSERT INTO files (id, bucket_id, name, size, mime_type, etag, is_uploaded,
		uploaded_by_user_id, metadata, blob_key, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::text::jsonb, $10, $11, $12)`,
		f.ID, f.BucketID, f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, f.UploadedByUserID,
		string(f.Metadata), f.BlobKey, f.CreatedAt, f.UpdatedAt)
	switch pgCode(err) {
	case uniqueViolation:
		return coffer.Errorf(coffer.ECONFLICT, "file %s already exists", f.ID)
	case foreignKeyViolation:
		return bucketNotFound(f.BucketID)
	}
	return err
}

func updateFile(ctx context.Context, tx pgx.Tx, f *coffer.File) error {
	_, err := tx.Exec(ctx, `UPDATE files SET name = $2, size = $3, mime_type = $4, etag = $5,
		is_uploaded = $6, metadata = $7::text::jsonb, blob_key = $8, updated_at = $9 WHERE id = $1`,
		f.ID, f.Name, f.Size, f.MimeType, f.ETag, f.IsUploaded, string(f.Metadata), f.BlobKey, f.UpdatedAt)
	return err
}

// GetFile returns ENOTFOUND if there is no such file (uploaded or not).
func (s *Store) GetFile(ctx context.Context, id string) (*coffer.File, error) {
	cid, ok := meta.FileID(id)
	if !ok {
		return nil, fileNotFound(id)
	}
	return getFile(ctx, s.pool, cid, "")
}

// getFile reads file id (canonical); lock is "" or " FOR UPDATE".
func getFile(ctx context.Context, q querier, id, lock string) (*coffer.File, error) {
	f, err := scanFile(q.QueryRow(ctx, `SELECT `+fileCols+` FROM files WHERE id = $1`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
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
	err := s.txEmit(ctx, "update file", func(tx pgx.Tx, emit emitFunc) error {
		before, err := getFile(ctx, tx, cid, " FOR UPDATE")
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
	err := s.txEmit(ctx, "delete file", func(tx pgx.Tx, emit emitFunc) error {
		var err error
		f, err = scanFile(tx.QueryRow(ctx, `DELETE FROM files WHERE id = $1 RETURNING `+fileCols, cid))
		if errors.Is(err, pgx.ErrNoRows) {
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
// opt.Prefix (taken literally), ordered by (name, id) in the "C" collation.
func (s *Store) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	limit := meta.ListLimit(opt.Limit)
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	q := `SELECT ` + fileCols + ` FROM files WHERE bucket_id = ` + arg(opt.BucketID) + ` AND is_uploaded`
	if opt.Prefix != "" {
		p := arg(opt.Prefix)
		q += ` AND name >= ` + p + ` AND starts_with(name, ` + p + `)`
	}
	if opt.Cursor != "" {
		name, id, err := meta.DecodeCursor(opt.Cursor)
		if err != nil {
			return coffer.Page{}, err
		}
		q += ` AND (name, id) > (` + arg(name) + `, ` + arg(id) + `::uuid)`
	}
	if opt.Filter != nil {
		q += ` AND ` + meta.FilterSQL(opt.Filter, opt.Vars, dialect(&args))
	}
	q += ` ORDER BY name, id LIMIT ` + arg(limit+1)
	files, err := collectFiles(s.pool.Query(ctx, q, args...))
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
	files, err := collectFiles(s.pool.Query(ctx, `SELECT `+fileCols+` FROM files
		WHERE NOT is_uploaded ORDER BY created_at, id LIMIT $1`, meta.ListLimit(limit)))
	if err != nil {
		return nil, dbErr(err, "list not uploaded files")
	}
	return files, nil
}

// EachFile calls fn for every file row in id order, stopping at the first error fn
// returns (and returning it unchanged).
func (s *Store) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	last := ""
	for {
		q, args := `SELECT `+fileCols+` FROM files ORDER BY id LIMIT $1`, []any{eachBatch}
		if last != "" {
			q, args = `SELECT `+fileCols+` FROM files WHERE id > $2 ORDER BY id LIMIT $1`, append(args, last)
		}
		files, err := collectFiles(s.pool.Query(ctx, q, args...))
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
