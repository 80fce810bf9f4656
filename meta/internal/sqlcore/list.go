package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// ListFiles returns a page of uploaded files of opt.BucketID whose name starts with
// opt.Prefix (taken literally), ordered by (name, id) in byte order. With a
// delimiter it skip-scans the (bucket, name, id) index: after the first file under a
// common prefix, whose row stands for it, the next query seeks past the prefix
// (meta.PrefixEnd), so a page costs a query per prefix on it, not a read of every
// name under them. The filter applies to every query: a prefix shows only if a file
// the filter keeps is under it.
func (s *Store) ListFiles(ctx context.Context, opt coffer.ListOptions) (coffer.Page, error) {
	if err := meta.CheckDelimiter(opt.Delimiter); err != nil {
		return coffer.Page{}, err
	}
	l := lister{s: s, opt: opt, limit: meta.ListLimit(opt.Limit)}
	if opt.Cursor != "" {
		name, id, err := meta.DecodeCursor(opt.Cursor)
		if err != nil {
			return coffer.Page{}, err
		}
		l.setPosition(name, id)
	}
	batch := l.limit + 1
	for !l.done && len(l.entries) <= l.limit {
		if err := l.next(ctx, min(batch, l.limit+1-len(l.entries))); err != nil {
			return coffer.Page{}, s.err(err, "list files")
		}
		if l.seeked {
			batch = seekBatch
		} else {
			batch = l.limit + 1
		}
	}
	return l.page(), nil
}

// seekBatch is the rows a query asks for right after seeking past a common prefix:
// the next entry is often another prefix, whose first row is all that is read of it.
const seekBatch = 8

// lister is one ListFiles call's state: the entries found so far and the position
// the next query starts from.
type lister struct {
	s     *Store
	opt   coffer.ListOptions
	limit int
	// The position: after (name, id); or, when id is "", from name on (inclusive),
	// or from the start when name is "" too.
	name, id string
	entries  []listEntry
	seeked   bool // the last query ended by seeking past a prefix
	done     bool // no rows are left
}

// listEntry is a file or a common prefix.
type listEntry struct {
	file   *coffer.File
	prefix string
}

// setPosition starts the listing after the file (name, id), or after every name
// beginning with the prefix name when id is "".
func (l *lister) setPosition(name, id string) {
	if id != "" {
		l.name, l.id = name, id
		return
	}
	end, ok := meta.PrefixEnd(name)
	l.name, l.id, l.done = end, "", !ok
}

// query returns the statement that reads at most n rows from the position on.
func (l *lister) query(n int) (string, []any) {
	s, opt := l.s, l.opt
	q := `SELECT ` + s.fileCols + ` FROM files WHERE tenant_id = ? AND bucket_id = ? AND is_uploaded = ` + s.d.True
	args := []any{s.tenant, opt.BucketID}
	if opt.Prefix != "" {
		args = append(args, opt.Prefix)
		q += ` AND name >= ? AND ` + s.d.HasPrefix("name", opt.Prefix, &args)
		if end, ok := meta.PrefixEnd(opt.Prefix); ok { // bounds the index range
			q += ` AND name < ?`
			args = append(args, end)
		}
	}
	switch {
	case l.id != "":
		q += ` AND (name, id) > (?, ` + s.d.UUIDArg + `)`
		args = append(args, l.name, l.id)
	case l.name != "":
		q += ` AND name >= ?`
		args = append(args, l.name)
	}
	if opt.Filter != nil {
		q += ` AND ` + meta.FilterSQL(opt.Filter, opt.Vars, s.d.Filter(&args))
	}
	return q + ` ORDER BY name, id LIMIT ?`, append(args, n)
}

// next reads at most n rows from the position: files become entries until one
// lies under a common prefix, which becomes an entry in its place; the position
// then moves past that prefix (or past the last file read).
func (l *lister) next(ctx context.Context, n int) error {
	q, args := l.query(n)
	rows, err := l.s.db.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	read, prefix := 0, ""
	var last *coffer.File
	for prefix == "" && rows.Next() {
		f, err := scanFile(rows)
		if err != nil {
			return err
		}
		read++
		if prefix = meta.CommonPrefix(l.opt.Prefix, f.Name, l.opt.Delimiter); prefix != "" {
			l.entries = append(l.entries, listEntry{prefix: prefix})
		} else {
			l.entries, last = append(l.entries, listEntry{file: f}), f
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	l.seeked = prefix != ""
	switch {
	case l.seeked:
		l.setPosition(prefix, "")
	case read < n:
		l.done = true
	default:
		l.name, l.id = last.Name, last.ID
	}
	return nil
}

// page returns the first limit entries, with the cursor after the last one when
// more were found.
func (l *lister) page() coffer.Page {
	page := coffer.Page{Files: []*coffer.File{}}
	entries := l.entries
	if len(entries) > l.limit {
		entries = entries[:l.limit]
		if e := entries[l.limit-1]; e.file != nil {
			page.Next = meta.EncodeCursor(e.file.Name, e.file.ID)
		} else {
			page.Next = meta.EncodePrefixCursor(e.prefix)
		}
	}
	for _, e := range entries {
		if e.file != nil {
			page.Files = append(page.Files, e.file)
		} else {
			page.Prefixes = append(page.Prefixes, e.prefix)
		}
	}
	return page
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
