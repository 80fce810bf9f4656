package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const bucketCols = `id, min_upload_file_size, max_upload_file_size, allowed_mime_types, cache_control,
	download_expiration, presigned_urls_enabled, public, allow_inline, created_at, updated_at`

const insertBucket = `INSERT INTO buckets (` + bucketCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func bucketArgs(b *coffer.Bucket) []any {
	types := b.AllowedMimeTypes
	if types == nil {
		types = []string{}
	}
	mt, _ := json.Marshal(types)
	return []any{b.ID, b.MinUploadFileSize, b.MaxUploadFileSize, string(mt), b.CacheControl,
		b.DownloadExpiration, b.PresignedURLsEnabled, b.Public, b.AllowInline,
		micros(b.CreatedAt), micros(b.UpdatedAt)}
}

func scanBucket(r scanner) (*coffer.Bucket, error) {
	var b coffer.Bucket
	var mt string
	var created, updated int64
	err := r.Scan(&b.ID, &b.MinUploadFileSize, &b.MaxUploadFileSize, &mt, &b.CacheControl,
		&b.DownloadExpiration, &b.PresignedURLsEnabled, &b.Public, &b.AllowInline, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(mt), &b.AllowedMimeTypes); err != nil {
		return nil, err
	}
	if b.AllowedMimeTypes == nil {
		b.AllowedMimeTypes = []string{}
	}
	b.CreatedAt, b.UpdatedAt = fromMicros(created), fromMicros(updated)
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
	err := s.writeEmit(ctx, "create bucket", func(tx *sql.Tx, emit emitFunc) error {
		_, err := tx.ExecContext(ctx, insertBucket, bucketArgs(&nb)...)
		if isUnique(err) {
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
	return getBucket(ctx, s.db, id)
}

func getBucket(ctx context.Context, q queryer, id string) (*coffer.Bucket, error) {
	b, err := scanBucket(q.QueryRowContext(ctx, `SELECT `+bucketCols+` FROM buckets WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, bucketNotFound(id)
	}
	return b, dbErr(err, "get bucket")
}

// ListBuckets returns all buckets ordered by id.
func (s *Store) ListBuckets(ctx context.Context) ([]*coffer.Bucket, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+bucketCols+` FROM buckets ORDER BY id`)
	if err != nil {
		return nil, dbErr(err, "list buckets")
	}
	defer rows.Close()
	out := []*coffer.Bucket{}
	for rows.Next() {
		b, err := scanBucket(rows)
		if err != nil {
			return nil, dbErr(err, "list buckets")
		}
		out = append(out, b)
	}
	return out, dbErr(rows.Err(), "list buckets")
}

// UpdateBucket applies u and bumps UpdatedAt. ENOTFOUND if missing.
func (s *Store) UpdateBucket(ctx context.Context, id string, u coffer.BucketUpdate) (*coffer.Bucket, error) {
	var b *coffer.Bucket
	err := s.write(ctx, "update bucket", func(tx *sql.Tx) error {
		var err error
		if b, err = getBucket(ctx, tx, id); err != nil {
			return err
		}
		u.Apply(b)
		b.UpdatedAt = meta.Now()
		_, err = tx.ExecContext(ctx, `UPDATE buckets SET min_upload_file_size = ?, max_upload_file_size = ?,
			allowed_mime_types = ?, cache_control = ?, download_expiration = ?, presigned_urls_enabled = ?,
			public = ?, allow_inline = ?, created_at = ?, updated_at = ? WHERE id = ?`,
			append(bucketArgs(b)[1:], id)...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// DeleteBucket removes an empty bucket. ENOTFOUND if missing, ECONFLICT if it still
// holds files (uploaded or not).
func (s *Store) DeleteBucket(ctx context.Context, id string) error {
	return s.writeEmit(ctx, "delete bucket", func(tx *sql.Tx, emit emitFunc) error {
		var used bool
		err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM files WHERE bucket_id = ?)`, id).Scan(&used)
		if err != nil {
			return err
		}
		if used {
			return coffer.Errorf(coffer.ECONFLICT, "bucket %q is not empty", id)
		}
		b, err := scanBucket(tx.QueryRowContext(ctx, `DELETE FROM buckets WHERE id = ? RETURNING `+bucketCols, id))
		if errors.Is(err, sql.ErrNoRows) {
			return bucketNotFound(id)
		}
		if err != nil {
			return err
		}
		return emit(meta.BucketEvent(ctx, coffer.BucketDeleted, b, meta.Now()))
	})
}
