package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// ListFiles returns a page of uploaded files of opt.BucketID whose name starts with
// opt.Prefix (taken literally), ordered by (name, id) in byte order.
func (s *Store) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	limit := meta.ListLimit(opt.Limit)
	q := `SELECT ` + s.fileCols + ` FROM files WHERE tenant_id = ? AND bucket_id = ? AND is_uploaded = ` + s.d.True
	args := []any{s.tenant, opt.BucketID}
	if opt.Prefix != "" {
		args = append(args, opt.Prefix)
		q += ` AND name >= ? AND ` + s.d.HasPrefix("name", opt.Prefix, &args)
	}
	if opt.Cursor != "" {
		name, id, err := meta.DecodeCursor(opt.Cursor)
		if err != nil {
			return coffer.Page{}, err
		}
		q += ` AND (name, id) > (?, ` + s.d.UUIDArg + `)`
		args = append(args, name, id)
	}
	if opt.Filter != nil {
		q += ` AND ` + meta.FilterSQL(opt.Filter, opt.Vars, s.d.Filter(&args))
	}
	q += ` ORDER BY name, id LIMIT ?`
	rows, err := s.db.Query(ctx, q, append(args, limit+1)...)
	files, err := Collect(rows, err, scanFile)
	if err != nil {
		return coffer.Page{}, s.err(err, "list files")
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
	rows, err := s.db.Query(ctx, `SELECT `+s.fileCols+` FROM files
		WHERE tenant_id = ? AND is_uploaded = `+s.d.False+` ORDER BY created_at, id LIMIT ?`,
		s.tenant, meta.ListLimit(limit))
	files, err := Collect(rows, err, scanFile)
	if err != nil {
		return nil, s.err(err, "list not uploaded files")
	}
	return files, nil
}

// EachFile calls fn for every file row in id order, stopping at the first error fn
// returns (and returning it unchanged).
func (s *Store) EachFile(ctx context.Context, fn func(*coffer.File) error) error {
	last := ""
	for {
		q, args := `SELECT `+s.fileCols+` FROM files WHERE tenant_id = ? ORDER BY id LIMIT ?`, []any{s.tenant, eachBatch}
		if last != "" {
			q = `SELECT ` + s.fileCols + ` FROM files WHERE tenant_id = ? AND id > ` + s.d.UUIDArg + ` ORDER BY id LIMIT ?`
			args = []any{s.tenant, last, eachBatch}
		}
		rows, err := s.db.Query(ctx, q, args...)
		files, err := Collect(rows, err, scanFile)
		if err != nil {
			return s.err(err, "list files")
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
