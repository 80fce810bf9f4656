package sqlcore

import (
	"context"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// errNameTaken says a concurrent write created the named file first; an unconditional
// PutFileByName retries once and then replaces it.
var errNameTaken = errors.New("sqlcore: name taken concurrently")

// GetFileByName returns the named file name in bucket; ENOTFOUND if there is none.
func (s *Store) GetFileByName(ctx context.Context, bucket, name string) (*coffer.File, error) {
	return s.getFileByName(ctx, s.db, bucket, name, "")
}

// getFileByName reads the named file (bucket, name); lock is "" or s.d.ForUpdate.
func (s *Store) getFileByName(ctx context.Context, q Querier, bucket, name, lock string) (*coffer.File, error) {
	f, err := scanFile(q.QueryRow(ctx, `SELECT `+s.fileCols+` FROM files
		WHERE tenant_id = ? AND bucket_id = ? AND name = ? AND named = `+s.d.True+lock, s.tenant, bucket, name))
	if IsNoRows(err) {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "file %q not found in bucket %q", name, bucket)
	}
	return f, s.err(err, "get file by name")
}

// PutFileByName creates or replaces the named file (f.BucketID, f.Name) if p holds.
// Writers that race to create the same name meet at the unique key: the loser fails
// with EPRECONDITION under If-None-Match: *, and otherwise retries as a replace.
func (s *Store) PutFileByName(ctx context.Context, f *coffer.File, p meta.Precondition) (before, after *coffer.File, err error) {
	for range 2 {
		before, after, err = s.putFileByName(ctx, f, p)
		if !errors.Is(err, errNameTaken) {
			break
		}
	}
	if errors.Is(err, errNameTaken) {
		err = coffer.Errorf(coffer.EABORTED, "file %q in bucket %q was changed concurrently; retry", f.Name, f.BucketID)
	}
	if err != nil {
		return nil, nil, err
	}
	*f = *after
	return before, after, nil
}

// putFileByName is one attempt of PutFileByName; errNameTaken if it lost a race.
func (s *Store) putFileByName(ctx context.Context, f *coffer.File, p meta.Precondition) (before, after *coffer.File, err error) {
	err = s.writeEmit(ctx, "put file by name", func(tx Querier, emit emitFunc) error {
		before, after = nil, nil // a DB may retry fn
		old, err := s.getFileByName(ctx, tx, f.BucketID, f.Name, s.d.ForUpdate)
		if err != nil && coffer.ErrorCode(err) != coffer.ENOTFOUND {
			return err
		}
		if err := p.Check(old); err != nil {
			return err
		}
		if err := s.deleteIntent(ctx, tx, f.BlobKey); err != nil {
			return err
		}
		if old == nil {
			after, err = s.createNamed(ctx, tx, f, p)
			if err != nil {
				return err
			}
			return emit(meta.FileEvent(ctx, coffer.FileCreated, nil, after, after.CreatedAt))
		}
		if after, err = s.replaceNamed(ctx, tx, old, f); err != nil {
			return err
		}
		before = old
		return emit(meta.ReplaceEvent(ctx, before, after, after.UpdatedAt))
	})
	return before, after, err
}

// createNamed inserts f as a named, uploaded file; errNameTaken (EPRECONDITION under
// If-None-Match: *) if a concurrent write took the name.
func (s *Store) createNamed(ctx context.Context, tx Querier, f *coffer.File, p meta.Precondition) (*coffer.File, error) {
	row, err := meta.PrepareInsert(f, meta.Now())
	if err != nil {
		return nil, err
	}
	row.IsUploaded = true
	if err := s.insertFile(ctx, tx, row); err != nil {
		return nil, err
	}
	_, err = tx.Exec(ctx, `UPDATE files SET named = `+s.d.True+` WHERE tenant_id = ? AND id = ?`, s.tenant, row.ID)
	switch {
	case s.d.Unique(err) && p.CreateOnly():
		return nil, coffer.Errorf(coffer.EPRECONDITION, "If-None-Match *: file %q exists", f.Name)
	case s.d.Unique(err):
		return nil, errNameTaken
	}
	return row, err
}

// replaceNamed writes f's content columns over the named file old.
func (s *Store) replaceNamed(ctx context.Context, tx Querier, old, f *coffer.File) (*coffer.File, error) {
	uploaded := true
	md := f.Metadata
	after, err := meta.ApplyUpdate(old, coffer.FileUpdate{
		Size: &f.Size, MimeType: &f.MimeType, ETag: &f.ETag, Metadata: &md,
		BlobKey: &f.BlobKey, IsUploaded: &uploaded,
	}, meta.Now())
	if err != nil {
		return nil, err
	}
	return after, s.updateFile(ctx, tx, after)
}
