package service

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/access"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/internal/timing"
	"github.com/coffer/coffer/meta"
)

// GetFile returns a file's metadata and its bucket. ENOTFOUND if the file does not
// exist, is not uploaded yet, or p may not read it; EFORBIDDEN instead when p's role
// may read no file at all (see unreadable).
func (s *Service) GetFile(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, *coffer.Bucket, error) {
	start := time.Now()
	f, b, err := s.lookup(ctx, id)
	timing.Since(ctx, "meta", start)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil, nil, s.unreadable(ctx, p)
	}
	if err != nil {
		return nil, nil, err
	}
	start = time.Now()
	ok := s.canRead(p, b, f)
	timing.Since(ctx, "rules", start)
	if !ok {
		return nil, nil, s.unreadable(ctx, p)
	}
	return f, b, nil
}

// lookup returns an uploaded file and its bucket, whoever asks.
func (s *Service) lookup(ctx context.Context, id string) (*coffer.File, *coffer.Bucket, error) {
	id, err := coffer.ParseFileID(id)
	if err != nil {
		return nil, nil, errFileNotFound()
	}
	f, err := s.meta.GetFile(ctx, id)
	if err != nil {
		if coffer.ErrorCode(err) == coffer.ENOTFOUND {
			return nil, nil, errFileNotFound()
		}
		return nil, nil, err
	}
	if !f.IsUploaded {
		return nil, nil, errFileNotFound()
	}
	b, err := s.meta.GetBucket(ctx, f.BucketID)
	if err != nil {
		return nil, nil, coffer.Internal(err, "file's bucket")
	}
	return f, b, nil
}

// OpenFile returns the file's metadata, bucket and an open reader of its contents.
// The caller closes the reader.
func (s *Service) OpenFile(ctx context.Context, p *coffer.Principal, id string) (*coffer.File, *coffer.Bucket, blob.Reader, error) {
	lastKey := ""
	for attempt := 1; ; attempt++ {
		f, b, err := s.GetFile(ctx, p, id)
		if err != nil {
			return nil, nil, nil, err
		}
		start := time.Now()
		r, hit, err := s.content.Open(ctx, f.BlobKey, f.Size)
		timing.FromContext(ctx).Add("blob-open", time.Since(start), cacheDesc(hit))
		if coffer.ErrorCode(err) == coffer.ENOTFOUND {
			if retryMissing(f.BlobKey, &lastKey, attempt) {
				s.rowMayBeStale(id)
				continue
			}
			return nil, nil, nil, s.missingBlob(f, err)
		}
		if err != nil {
			return nil, nil, nil, err
		}
		return f, b, r, nil
	}
}

// maxReadAttempts bounds how often a read retries after its blob vanished under it.
const maxReadAttempts = 8

// retryMissing reports whether a read whose blob key was not found should read the
// row again: yes the first time (the row may be stale), and again while each attempt
// found a different key (the file is being replaced over and over while it is read),
// up to maxReadAttempts. The same key missing twice from a fresh row is broken
// metadata.
func retryMissing(key string, last *string, attempt int) bool {
	again := attempt < maxReadAttempts && key != *last
	*last = key
	return again
}

// rowMayBeStale is called when the blob a file row names is not in the blob store.
// Usually the file was replaced or deleted after the row was read (a replaced or
// deleted file's blob goes as soon as the change commits), or this node's cached row
// predates another node's change whose notification is still on its way. It drops
// the cached row, so that reading the file again gets the row from the store.
func (s *Service) rowMayBeStale(id string) {
	if c, ok := s.meta.(interface{ ForgetFile(id string) }); ok {
		c.ForgetFile(id)
	}
}

// missingBlob is the error for a fresh file row whose blob is missing: broken
// metadata (or a file replaced twice while it was read), a 500 that is logged.
func (s *Service) missingBlob(f *coffer.File, err error) error {
	s.log.Error("file row without blob (broken metadata)", "file", f.ID, "key", f.BlobKey)
	return &coffer.Error{Code: coffer.EINTERNAL, Message: "file contents are missing", Err: err}
}

// cacheDesc describes where content came from, for Server-Timing.
func cacheDesc(hit bool) string {
	if hit {
		return "memory"
	}
	return "store"
}

// DeleteFile removes a file: the row first, then its blob.
func (s *Service) DeleteFile(ctx context.Context, p *coffer.Principal, id string) error {
	old, b, err := s.GetFile(ctx, p, id)
	if err != nil {
		return err
	}
	if _, err := s.allowed(p, b, old, access.Delete); err != nil {
		return err
	}
	f, err := s.meta.DeleteFile(coffer.WithActor(ctx, p), old.ID)
	if err != nil {
		if coffer.ErrorCode(err) == coffer.ENOTFOUND {
			return errFileNotFound()
		}
		return err
	}
	s.deleteBlob(ctx, f.BlobKey)
	s.forgetVariants(ctx, f.ID)
	return nil
}

// UpdateFile changes a file's name and/or metadata.
func (s *Service) UpdateFile(ctx context.Context, p *coffer.Principal, id string, name *string, md json.RawMessage) (*coffer.File, error) {
	old, b, err := s.GetFile(ctx, p, id)
	if err != nil {
		return nil, err
	}
	perm, err := s.allowed(p, b, old, access.Replace)
	if err != nil {
		return nil, err
	}
	var u coffer.FileUpdate
	if name != nil {
		n, err := coffer.CleanName(*name)
		if err != nil {
			return nil, err
		}
		u.Name = &n
	}
	if md != nil {
		m, err := coffer.ValidateMetadata(md)
		if err != nil {
			return nil, err
		}
		u.Metadata = &m
	}
	projected := *old
	u.Apply(&projected)
	if err := checkNew(p, perm, &projected); err != nil {
		return nil, err
	}
	u.IfBlobKey = &old.BlobKey
	f, err := s.meta.UpdateFile(coffer.WithActor(ctx, p), old.ID, u)
	if coffer.ErrorCode(err) == coffer.EABORTED {
		return nil, coffer.Errorf(coffer.EABORTED, "the file was replaced concurrently; retry")
	}
	return f, err
}

// ListFiles lists a bucket's uploaded files in (name, id) order, a page at a time: at
// most opt.Limit files, fewer when their names and metadata would pass maxPageBytes.
func (s *Service) ListFiles(ctx context.Context, p *coffer.Principal, opt coffer.ListOptions) (coffer.Page, error) {
	b, err := s.meta.GetBucket(ctx, opt.BucketID)
	if err != nil {
		return coffer.Page{}, err
	}
	if !p.Admin && !b.Public {
		perm := s.permission(p, b, access.Read)
		if perm == nil {
			return coffer.Page{}, errNotAuthorized()
		}
		opt.Filter, opt.Vars = perm.Filter, p.Session
	}
	if opt.Limit < 0 || opt.Limit > 1000 {
		return coffer.Page{}, coffer.Errorf(coffer.EINVALID, "limit must be between 1 and 1000 (0: the default, 100)")
	}
	start := time.Now()
	page, err := s.meta.ListFiles(ctx, opt)
	timing.Since(ctx, "meta", start)
	return trimPage(page), err
}

// maxPageBytes bounds the names and metadata a page of files carries: a file's
// metadata may be 64 KiB (coffer.MaxMetadataBytes), so a page of 1000 could carry
// 64 MiB, past what clients take in one message (gRPC's default limit is 4 MiB).
const maxPageBytes = 2 << 20

// fileBytes is what a file's other fields add to a page, about.
const fileBytes = 256

// trimPage ends page before the file that would take it past maxPageBytes (it keeps
// one file at least), with the cursor that resumes after its last file: a page may
// be shorter than its limit, and the next one goes on from there. The prefixes that
// sort after that file go too (names are at most 1 KiB: prefixes alone stay small).
func trimPage(page coffer.Page) coffer.Page {
	size := 0
	for i, f := range page.Files {
		size += len(f.Name) + len(f.Metadata) + fileBytes
		if size > maxPageBytes && i > 0 {
			last := page.Files[i-1]
			page.Files, page.Next = page.Files[:i], meta.EncodeCursor(last.Name, last.ID)
			n, _ := slices.BinarySearch(page.Prefixes, last.Name)
			page.Prefixes = page.Prefixes[:n]
			return page
		}
	}
	return page
}

// Presign checks that p may have a presigned URL of file id and returns the file and
// how long the URL lives: want, capped at the bucket's download expiration (within
// 1 s and coffer.MaxDownloadExpiration), which want 0 means. EINVALID for a negative
// or sub-second want; ENOTFOUND if p may not read the file; EFORBIDDEN if its bucket
// has presigned URLs disabled. The face that serves the URL signs it.
func (s *Service) Presign(ctx context.Context, p *coffer.Principal, id string, want time.Duration) (*coffer.File, time.Duration, error) {
	if want < 0 || want%time.Second != 0 {
		return nil, 0, coffer.InvalidField("expiresInSeconds", "the expiration must be a whole number of seconds, 0 or more")
	}
	f, b, err := s.GetFile(ctx, p, id)
	if err != nil {
		return nil, 0, err
	}
	if !b.PresignedURLsEnabled {
		return nil, 0, ErrPresignDisabled()
	}
	ttl := time.Duration(min(max(b.DownloadExpiration, 1), coffer.MaxDownloadExpiration)) * time.Second
	if want > 0 {
		ttl = min(ttl, want)
	}
	return f, ttl, nil
}

// ErrPresignDisabled is hasura-storage's answer for a bucket without presigned URLs.
func ErrPresignDisabled() error {
	return coffer.Errorf(coffer.EFORBIDDEN, "presigned URLs are not enabled on the bucket where this file is located in")
}
