package service

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/access"
)

// Upload collects the files of one upload (POST, several files) or replace (PUT, one
// file) request. Contents stream into blobs as they arrive; names, ids and metadata
// may come before or after; Commit makes all of them visible at once, or none.
// Always defer Abort: it removes whatever was not committed.
type Upload struct {
	s         *Service
	p         *coffer.Principal
	bucket    *coffer.Bucket
	replaceID string // set for a replace
	old       *coffer.File
	perm      *access.Permission // the caller's upload or replace permission; nil for admins
	items     []*uploadItem
	nContent  int // items[:nContent] have contents
	done      bool
	later     bool // the bucket is not named yet (BeginUploadLater)
}

type uploadItem struct {
	blobKey  string
	size     int64
	mimeType string
	etag     string
	partName string // the multipart filename, used when no name is given
	id       string
	name     string
	metadata json.RawMessage
	hasMeta  bool
}

// UploadMeta is the client-supplied part of a file's metadata.
type UploadMeta struct {
	ID       string
	Name     string
	Metadata json.RawMessage
}

// BeginUpload starts an upload of new files into bucketID.
func (s *Service) BeginUpload(ctx context.Context, p *coffer.Principal, bucketID string) (*Upload, error) {
	if err := coffer.ValidateBucketID(bucketID); err != nil {
		return nil, err
	}
	b, err := s.uploadBucket(ctx, bucketID)
	if err != nil {
		return nil, err
	}
	u := &Upload{s: s, p: p, bucket: b}
	if !p.Admin {
		if u.perm = s.permission(p, b, access.Upload); u.perm == nil {
			return nil, errNotAuthorized()
		}
		u.bucket = capSize(b, u.perm.MaxSize)
	}
	return u, nil
}

// uploadBucket returns the bucket an upload names; ENOTFOUND "bucket not found" (as
// hasura-storage words it) if there is none.
func (s *Service) uploadBucket(ctx context.Context, id string) (*coffer.Bucket, error) {
	b, err := s.meta.GetBucket(ctx, id)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "bucket not found")
	}
	return b, err
}

// BeginUploadLater starts an upload whose bucket is named after some of its files
// (SetBucket; the Nhost JS SDK sends "bucket-id" after "file[]"). Contents stream into
// blobs at once, under a provisional limit: the largest maximum size of the buckets
// the caller may upload to, with the MIME and size rules of the real bucket checked
// by SetBucket. A caller who may upload to no bucket at all is refused at once.
func (s *Service) BeginUploadLater(ctx context.Context, p *coffer.Principal) (*Upload, error) {
	u := &Upload{s: s, p: p, bucket: &coffer.Bucket{}, later: true}
	if p.Admin {
		return u, nil // admins: the server takes any size a bucket may take
	}
	bs, err := s.meta.ListBuckets(ctx)
	if err != nil {
		return nil, err
	}
	allowed := false
	for _, b := range bs {
		perm := s.permission(p, b, access.Upload)
		if perm == nil {
			continue
		}
		limit := capSize(b, perm.MaxSize).MaxUploadFileSize
		switch {
		case !allowed, limit <= 0:
			u.bucket.MaxUploadFileSize = limit
		case u.bucket.MaxUploadFileSize > 0:
			u.bucket.MaxUploadFileSize = max(u.bucket.MaxUploadFileSize, limit)
		}
		allowed = true
	}
	if !allowed {
		return nil, errNotAuthorized()
	}
	return u, nil
}

// Deferred reports whether the upload's bucket is still to be named (SetBucket).
func (u *Upload) Deferred() bool { return u.later }

// SetBucket names the bucket of an upload begun with BeginUploadLater: it checks the
// caller's permission there and the bucket's limits on the files already received.
func (u *Upload) SetBucket(ctx context.Context, bucketID string) error {
	if !u.later {
		return coffer.Errorf(coffer.EINVALID, "the upload's bucket is already set")
	}
	if err := coffer.ValidateBucketID(bucketID); err != nil {
		return err
	}
	b, err := u.s.uploadBucket(ctx, bucketID)
	if err != nil {
		return err
	}
	if !u.p.Admin {
		if u.perm = u.s.permission(u.p, b, access.Upload); u.perm == nil {
			return errNotAuthorized()
		}
		b = capSize(b, u.perm.MaxSize)
	}
	for _, it := range u.items[:u.nContent] {
		if err := checkLimits(b, it.mimeType, it.size); err != nil {
			return err
		}
	}
	u.bucket, u.later = b, false
	return nil
}

// checkLimits applies a bucket's MIME and size rules to a received file.
func checkLimits(b *coffer.Bucket, mimeType string, size int64) error {
	if !mimeAllowed(b.AllowedMimeTypes, mimeType) {
		return coffer.Errorf(coffer.EUNSUPPORTED, "MIME type %q is not allowed in bucket %q", mimeType, b.ID)
	}
	if b.MaxUploadFileSize > 0 && size > b.MaxUploadFileSize {
		return tooLarge(b)
	}
	if size < b.MinUploadFileSize {
		return tooSmall(b)
	}
	return nil
}

// capSize returns b with its maximum upload size lowered to a role's cap.
func capSize(b *coffer.Bucket, max int64) *coffer.Bucket {
	if max <= 0 || (b.MaxUploadFileSize > 0 && b.MaxUploadFileSize <= max) {
		return b
	}
	c := *b
	c.MaxUploadFileSize = max
	return &c
}

// BeginReplace starts replacing the contents of file id.
func (s *Service) BeginReplace(ctx context.Context, p *coffer.Principal, id string) (*Upload, error) {
	f, b, err := s.GetFile(ctx, p, id)
	if err != nil {
		return nil, err
	}
	perm, err := s.allowed(p, b, f, access.Replace)
	if err != nil {
		return nil, err
	}
	return &Upload{s: s, p: p, bucket: b, replaceID: f.ID, old: f, perm: perm}, nil
}

// Bucket returns the target bucket.
func (u *Upload) Bucket() *coffer.Bucket { return u.bucket }

// Len returns how many contents were added.
func (u *Upload) Len() int { return len(u.items) }

// AddContent streams one file's bytes into a new blob, enforcing the bucket's size and
// MIME limits while streaming. declaredType is the part's Content-Type ("" if none),
// size the exact length or -1.
func (u *Upload) AddContent(ctx context.Context, partName, declaredType string, r io.Reader, size int64) error {
	if u.replaceID != "" && u.nContent == 1 {
		return coffer.Errorf(coffer.EINVALID, "a replace takes exactly one file")
	}
	key, info, err := u.s.writeBlob(ctx, u.bucket, declaredType, r, size, u.origin(partName))
	if err != nil {
		return err
	}
	if u.nContent == len(u.items) {
		u.items = append(u.items, &uploadItem{})
	}
	it := u.items[u.nContent]
	u.nContent++
	it.blobKey, it.size, it.mimeType, it.etag, it.partName = key, info.size, info.mimeType, info.etag, partName
	return nil
}

// SetMeta sets the i-th file's id, name and metadata (from metadata[] parts, in order).
func (u *Upload) SetMeta(i int, m UploadMeta) error {
	for len(u.items) <= i {
		u.items = append(u.items, &uploadItem{})
	}
	it := u.items[i]
	if it.hasMeta {
		return coffer.Errorf(coffer.EINVALID, "metadata given twice for file %d", i)
	}
	it.id, it.name, it.metadata, it.hasMeta = m.ID, m.Name, m.Metadata, true
	return nil
}

// Commit validates names and ids and makes every file visible in one transaction.
// EQUOTA if the tenant's quota would be passed: the client's error (507), warned
// about at most every 10 s per tenant, not logged per request.
func (u *Upload) Commit(ctx context.Context) ([]*coffer.File, error) {
	files, err := u.commit(ctx)
	if coffer.ErrorCode(err) == coffer.EQUOTA {
		u.s.overQuota.refused("bucket", u.bucket.ID, "user_id", u.p.UserID, "role", u.p.Role, "err", coffer.ErrorMessage(err))
	}
	return files, err
}

func (u *Upload) commit(ctx context.Context) ([]*coffer.File, error) {
	if len(u.items) == 0 {
		return nil, coffer.Errorf(coffer.EINVALID, "no file in the request (use the multipart field \"file[]\")")
	}
	if u.later {
		return nil, coffer.Errorf(coffer.EINVALID, "the upload's bucket was never named")
	}
	for i, it := range u.items {
		if it.blobKey == "" {
			return nil, coffer.Errorf(coffer.EINVALID, "metadata[] %d has no matching file[]", i)
		}
	}
	if u.replaceID != "" {
		f, err := u.commitReplace(ctx)
		if err != nil {
			return nil, err
		}
		return []*coffer.File{f}, nil
	}
	files := make([]*coffer.File, len(u.items))
	for i, it := range u.items {
		f, err := u.newFile(it)
		if err != nil {
			return nil, err
		}
		if err := applyPresets(u.p, u.perm, f); err != nil {
			return nil, err
		}
		if err := checkNew(u.p, u.perm, f); err != nil {
			return nil, err
		}
		files[i] = f
	}
	if err := u.s.meta.CreateFiles(coffer.WithActor(ctx, u.p), files); err != nil {
		if coffer.ErrorCode(err) == coffer.ECONFLICT && !u.p.Admin {
			return nil, errIDTaken
		}
		return nil, err
	}
	u.done = true
	return files, nil
}

// errIDTaken answers a user whose client-chosen id is taken. It is the same whoever
// owns the file and whether the user may read it, and does not repeat the id: that the
// id is in use is all it tells (GET of a file the user may not read stays a 404).
var errIDTaken error = &coffer.Error{Code: coffer.ECONFLICT, Message: "the file id is not available; choose another or leave \"id\" out to get a new one"}

func (u *Upload) newFile(it *uploadItem) (*coffer.File, error) {
	id := coffer.NewFileID()
	if it.id != "" {
		var err error
		if id, err = coffer.ParseFileID(it.id); err != nil {
			return nil, err
		}
	}
	name, err := pickName(it)
	if err != nil {
		return nil, err
	}
	md, err := coffer.ValidateMetadata(it.metadata)
	if err != nil {
		return nil, err
	}
	return &coffer.File{
		ID: id, BucketID: u.bucket.ID, Name: name, Size: it.size, MimeType: it.mimeType,
		ETag: it.etag, IsUploaded: true, Metadata: md, BlobKey: it.blobKey, // the uploader: by preset only, as in hasura-storage
	}, nil
}

func pickName(it *uploadItem) (string, error) {
	name := it.name
	if name == "" {
		name = it.partName
	}
	if name == "" {
		return "", coffer.Errorf(coffer.EINVALID, "file has no name (give a filename or metadata name)")
	}
	return coffer.CleanName(name)
}

func (u *Upload) commitReplace(ctx context.Context) (*coffer.File, error) {
	it := u.items[0]
	if it.id != "" && !strings.EqualFold(it.id, u.replaceID) {
		return nil, coffer.Errorf(coffer.EINVALID, "metadata id does not match the file being replaced")
	}
	// Unconditional: concurrent replaces of one file all succeed and the last to commit
	// wins, as in hasura-storage; each then deletes the blob its commit displaced.
	upd := coffer.FileUpdate{Size: &it.size, MimeType: &it.mimeType, ETag: &it.etag, BlobKey: &it.blobKey}
	if it.name != "" || it.partName != "" { // the new file's name, as hasura-storage takes it
		n, err := pickName(it)
		if err != nil {
			return nil, err
		}
		upd.Name = &n
	}
	if it.hasMeta && it.metadata != nil {
		md, err := coffer.ValidateMetadata(it.metadata)
		if err != nil {
			return nil, err
		}
		upd.Metadata = &md
	}
	projected := *u.old
	upd.Apply(&projected)
	if err := checkNew(u.p, u.perm, &projected); err != nil {
		return nil, err
	}
	before, after, err := u.s.meta.CommitUpload(coffer.WithActor(ctx, u.p), u.replaceID, it.blobKey, upd)
	if err != nil {
		if coffer.ErrorCode(err) == coffer.EABORTED {
			return nil, coffer.Errorf(coffer.EABORTED, "the upload was abandoned before it finished; retry")
		}
		return nil, err
	}
	u.done = true
	if before.BlobKey != "" && before.BlobKey != it.blobKey {
		u.s.deleteBlob(ctx, before.BlobKey)
	}
	u.s.forgetVariants(ctx, after.ID)
	return after, nil
}

// Abort removes the blobs and intents of an uncommitted upload. Safe to call always.
func (u *Upload) Abort(ctx context.Context) {
	if u.done {
		return
	}
	u.done = true
	for _, it := range u.items {
		if it.blobKey != "" {
			u.s.abortBlob(ctx, it.blobKey)
		}
	}
}

func (s *Service) abortBlob(ctx context.Context, key string) {
	ctx = context.WithoutCancel(ctx)
	s.deleteBlob(ctx, key)
	if err := s.meta.AbortUpload(ctx, key); err != nil {
		s.log.Warn("abort upload failed; the sweeper will retry", "key", key, "err", err)
	}
}

// writeBlob records an intent, then streams r into a new blob while counting, hashing
// (for the ETag: uploadhash.go), enforcing the bucket's limits
// and, with a virus scanner, teeing the bytes into a scan whose verdict must be clean
// before the blob is kept.
func (s *Service) writeBlob(ctx context.Context, b *coffer.Bucket, declaredType string, r io.Reader, size int64, o origin) (string, *uploadItem, error) {
	br := bufio.NewReaderSize(r, 512)
	head, _ := br.Peek(512)
	mt := coffer.StoredType(declaredType, head)
	if !mimeAllowed(b.AllowedMimeTypes, mt) {
		return "", nil, coffer.Errorf(coffer.EUNSUPPORTED, "MIME type %q is not allowed in bucket %q", mt, b.ID)
	}
	if size >= 0 && b.MaxUploadFileSize > 0 && size > b.MaxUploadFileSize {
		return "", nil, tooLarge(b)
	}
	tee, err := s.beginScan(ctx)
	if err != nil {
		return "", nil, err
	}
	defer tee.close()
	key := newBlobKey()
	if err := s.meta.BeginUpload(ctx, key, nil); err != nil {
		return "", nil, err
	}
	lr := &limitReader{r: br, max: b.MaxUploadFileSize, bucket: b}
	h := newHashPipe(s.cfg.ETag)
	defer h.close()
	_, err = s.blobs.Put(ctx, key, tee.wrap(io.TeeReader(lr, h)), size)
	if err == nil && lr.n < b.MinUploadFileSize {
		err = tooSmall(b)
	}
	if err == nil || tee.failed() {
		if verr := s.scanVerdict(ctx, tee, b, o, lr.n); verr != nil {
			err = verr
		}
	}
	if err != nil {
		s.abortBlob(ctx, key)
		if lr.err != nil {
			return "", nil, lr.err
		}
		if lr.srcErr != nil {
			return "", nil, coffer.Errorf(coffer.EINVALID, "reading the upload body: %v", lr.srcErr)
		}
		if ctx.Err() != nil {
			return "", nil, coffer.Errorf(coffer.EINVALID, "upload interrupted: %v", context.Cause(ctx))
		}
		return "", nil, err
	}
	return key, &uploadItem{size: lr.n, mimeType: mt, etag: h.Sum()}, nil
}

func tooLarge(b *coffer.Bucket) error {
	return coffer.Errorf(coffer.ETOOLARGE, "file is larger than the bucket's maximum of %d bytes", b.MaxUploadFileSize)
}

func tooSmall(b *coffer.Bucket) error {
	return coffer.Errorf(coffer.EINVALID, "file is smaller than the bucket's minimum of %d bytes", b.MinUploadFileSize)
}

// limitReader fails once more than max bytes (max > 0) were read.
type limitReader struct {
	r      io.Reader
	n, max int64
	bucket *coffer.Bucket
	err    error // the limit was exceeded
	srcErr error // the client's body failed (malformed multipart, disconnect)
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if err != nil && err != io.EOF {
		l.srcErr = err
	}
	if l.max > 0 && l.n > l.max {
		l.err = tooLarge(l.bucket)
		return 0, l.err
	}
	return n, err
}

// mimeAllowed matches mt (parameters ignored) against patterns like "image/*".
func mimeAllowed(patterns []string, mt string) bool {
	if len(patterns) == 0 {
		return true
	}
	base, _, _ := strings.Cut(mt, ";")
	base = strings.ToLower(strings.TrimSpace(base))
	for _, p := range patterns {
		p = strings.ToLower(p)
		if p == base || p == "*/*" {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "/*"); ok && strings.HasPrefix(base, prefix+"/") {
			return true
		}
	}
	return false
}
