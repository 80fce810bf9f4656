package sqlcore

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const bucketCols = `id, min_upload_file_size, max_upload_file_size, allowed_mime_types, cache_control,
	download_expiration, presigned_urls_enabled, public, allow_inline, cache_control_shared, created_at, updated_at`

const insertBucket = `INSERT INTO buckets (tenant_id, ` + bucketCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// bucketArgs returns b's columns in bucketCols order.
func (s *Store) bucketArgs(b *coffer.Bucket) []any {
	types := b.AllowedMimeTypes
	if types == nil {
		types = []string{}
	}
	return []any{b.ID, b.MinUploadFileSize, b.MaxUploadFileSize, s.d.List(types), b.CacheControl,
		b.DownloadExpiration, b.PresignedURLsEnabled, b.Public, b.AllowInline, b.CacheControlShared,
		s.d.Time(b.CreatedAt), s.d.Time(b.UpdatedAt)}
}

// scanBucket reads a row of bucketCols.
func (s *Store) scanBucket(r Row) (*coffer.Bucket, error) {
	var b coffer.Bucket
	err := r.Scan(&b.ID, &b.MinUploadFileSize, &b.MaxUploadFileSize, s.d.ListDest(&b.AllowedMimeTypes),
		&b.CacheControl, &b.DownloadExpiration, &b.PresignedURLsEnabled, &b.Public, &b.AllowInline,
		&b.CacheControlShared, Time{&b.CreatedAt}, Time{&b.UpdatedAt})
	if err != nil {
		return nil, err
	}
	if b.AllowedMimeTypes == nil {
		b.AllowedMimeTypes = []string{}
	}
	return &b, nil
}

func bucketNotFound(id string) error {
	return coffer.Errorf(coffer.ENOTFOUND, "bucket %q not found", id)
}

// CreateBucket inserts b, setting CreatedAt/UpdatedAt. ECONFLICT if the id exists.
func (s *Store) CreateBucket(ctx context.Context, b *coffer.Bucket) error {
	nb := *b
	nb.CreatedAt = meta.Now()
	nb.UpdatedAt = nb.CreatedAt
	err := s.writeEmit(ctx, "create bucket", func(tx Querier, emit emitFunc) error {
		_, err := tx.Exec(ctx, insertBucket, append([]any{s.tenant}, s.bucketArgs(&nb)...)...)
		if s.d.Unique(err) {
			return coffer.Errorf(coffer.ECONFLICT, "bucket %q already exists", b.ID)
		}
		if err != nil {
			return err
		}
		return emit(meta.BucketEvent(ctx, coffer.BucketCreated, &nb, nb.CreatedAt))
	})
	if err == nil {
		b.CreatedAt, b.UpdatedAt = nb.CreatedAt, nb.UpdatedAt
	}
	return err
}

// GetBucket returns ENOTFOUND if there is no such bucket.
func (s *Store) GetBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	return s.getBucket(ctx, s.db, id, "")
}

// getBucket reads bucket id; lock is "" or s.d.ForUpdate.
func (s *Store) getBucket(ctx context.Context, q Querier, id, lock string) (*coffer.Bucket, error) {
	b, err := s.scanBucket(q.QueryRow(ctx, `SELECT `+bucketCols+` FROM buckets WHERE tenant_id = ? AND id = ?`+lock,
		s.tenant, id))
	if IsNoRows(err) {
		return nil, bucketNotFound(id)
	}
	return b, s.err(err, "get bucket")
}

// ListBuckets returns all buckets ordered by id.
func (s *Store) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	rows, err := s.db.Query(ctx, `SELECT `+bucketCols+` FROM buckets WHERE tenant_id = ? ORDER BY id`, s.tenant)
	out, err := Collect(rows, err, s.scanBucket)
	return out, s.err(err, "list buckets")
}

// UpdateBucket applies u and bumps UpdatedAt. ENOTFOUND if missing.
func (s *Store) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	var b *coffer.Bucket
	err := s.write(ctx, "update bucket", func(tx Querier) error {
		var err error
		if b, err = s.getBucket(ctx, tx, id, s.d.ForUpdate); err != nil {
			return err
		}
		u.Apply(b)
		b.UpdatedAt = meta.Now()
		_, err = tx.Exec(ctx, `UPDATE buckets SET min_upload_file_size = ?, max_upload_file_size = ?,
			allowed_mime_types = ?, cache_control = ?, download_expiration = ?, presigned_urls_enabled = ?,
			public = ?, allow_inline = ?, cache_control_shared = ?, created_at = ?, updated_at = ?
			WHERE tenant_id = ? AND id = ?`,
			append(s.bucketArgs(b)[1:], s.tenant, id)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// DeleteBucket removes an empty bucket. ENOTFOUND if missing, EINUSE if it still
// holds files (uploaded or not), also when a file is inserted concurrently.
func (s *Store) DeleteBucket(ctx context.Context, id string) error {
	return s.writeEmit(ctx, "delete bucket", func(tx Querier, emit emitFunc) error {
		var used bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE tenant_id = ? AND bucket_id = ?)`,
			s.tenant, id).Scan(&used)
		if err != nil {
			return err
		}
		if used {
			return coffer.Errorf(coffer.EINUSE, "bucket %q is not empty", id)
		}
		b, err := s.scanBucket(tx.QueryRow(ctx, `DELETE FROM buckets WHERE tenant_id = ? AND id = ? RETURNING `+bucketCols,
			s.tenant, id))
		switch {
		case s.d.ForeignKey(err): // a file was inserted since the check
			return coffer.Errorf(coffer.EINUSE, "bucket %q is not empty", id)
		case IsNoRows(err):
			return bucketNotFound(id)
		case err != nil:
			return err
		}
		return emit(meta.BucketEvent(ctx, coffer.BucketDeleted, b, meta.Now()))
	})
}
