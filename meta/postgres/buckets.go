package postgres

import (
	"context"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/jackc/pgx/v5"
)

const bucketCols = `id, min_upload_file_size, max_upload_file_size, allowed_mime_types, cache_control,
	download_expiration, presigned_urls_enabled, public, allow_inline, created_at, updated_at`

const insertBucket = `INSERT INTO buckets (` + bucketCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`

func bucketArgs(b *coffer.Bucket) []any {
	types := b.AllowedMimeTypes
	if types == nil {
		types = []string{}
	}
	return []any{b.ID, b.MinUploadFileSize, b.MaxUploadFileSize, types, b.CacheControl,
		b.DownloadExpiration, b.PresignedURLsEnabled, b.Public, b.AllowInline, b.CreatedAt, b.UpdatedAt}
}

func scanBucket(r pgx.Row) (*coffer.Bucket, error) {
	var b coffer.Bucket
	err := r.Scan(&b.ID, &b.MinUploadFileSize, &b.MaxUploadFileSize, &b.AllowedMimeTypes, &b.CacheControl,
		&b.DownloadExpiration, &b.PresignedURLsEnabled, &b.Public, &b.AllowInline, &b.CreatedAt, &b.UpdatedAt)
	if err != nil {
		return nil, err
	}
	if b.AllowedMimeTypes == nil {
		b.AllowedMimeTypes = []string{}
	}
	b.CreatedAt, b.UpdatedAt = b.CreatedAt.UTC(), b.UpdatedAt.UTC()
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
	err := s.txEmit(ctx, "create bucket", func(tx pgx.Tx, emit emitFunc) error {
		_, err := tx.Exec(ctx, insertBucket, bucketArgs(&nb)...)
		if pgCode(err) == uniqueViolation {
			return coffer.Errorf(coffer.ECONFLICT, "bucket %q already exists", b.ID)
		}
		if err != nil {
			return err
		}
		return emit(meta.BucketEvent(ctx, coffer.BucketCreated, &nb, nb.CreatedAt))
	})
	if err != nil {
		return err
	}
	b.CreatedAt, b.UpdatedAt = nb.CreatedAt, nb.UpdatedAt
	return nil
}

// GetBucket returns ENOTFOUND if there is no such bucket.
func (s *Store) GetBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	return getBucket(ctx, s.pool, id, "")
}

// getBucket reads bucket id; lock is "" or " FOR UPDATE".
func getBucket(ctx context.Context, q querier, id, lock string) (*coffer.Bucket, error) {
	b, err := scanBucket(q.QueryRow(ctx, `SELECT `+bucketCols+` FROM buckets WHERE id = $1`+lock, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, bucketNotFound(id)
	}
	return b, dbErr(err, "get bucket")
}

// ListBuckets returns all buckets ordered by id.
func (s *Store) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+bucketCols+` FROM buckets ORDER BY id`)
	if err != nil {
		return nil, dbErr(err, "list buckets")
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*coffer.Bucket, error) { return scanBucket(r) })
	if err != nil {
		return nil, dbErr(err, "list buckets")
	}
	return out, nil
}

// UpdateBucket applies u and bumps UpdatedAt. ENOTFOUND if missing.
func (s *Store) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	var b *coffer.Bucket
	err := s.tx(ctx, "update bucket", func(tx pgx.Tx) error {
		var err error
		if b, err = getBucket(ctx, tx, id, " FOR UPDATE"); err != nil {
			return err
		}
		u.Apply(b)
		b.UpdatedAt = meta.Now()
		_, err = tx.Exec(ctx, `UPDATE buckets SET min_upload_file_size = $2, max_upload_file_size = $3,
			allowed_mime_types = $4, cache_control = $5, download_expiration = $6, presigned_urls_enabled = $7,
			public = $8, allow_inline = $9, created_at = $10, updated_at = $11 WHERE id = $1`, bucketArgs(b)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// DeleteBucket removes an empty bucket. ENOTFOUND if missing, ECONFLICT if it still
// holds files (uploaded or not), also when a file is inserted concurrently.
func (s *Store) DeleteBucket(ctx context.Context, id string) error {
	return s.txEmit(ctx, "delete bucket", func(tx pgx.Tx, emit emitFunc) error {
		var used bool
		err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE bucket_id = $1)`, id).Scan(&used)
		if err != nil {
			return err
		}
		if used {
			return coffer.Errorf(coffer.ECONFLICT, "bucket %q is not empty", id)
		}
		b, err := scanBucket(tx.QueryRow(ctx, `DELETE FROM buckets WHERE id = $1 RETURNING `+bucketCols, id))
		switch {
		case pgCode(err) == foreignKeyViolation: // a file was inserted since the check
			return coffer.Errorf(coffer.ECONFLICT, "bucket %q is not empty", id)
		case errors.Is(err, pgx.ErrNoRows):
			return bucketNotFound(id)
		case err != nil:
			return err
		}
		return emit(meta.BucketEvent(ctx, coffer.BucketDeleted, b, meta.Now()))
	})
}
