package service

import (
	"context"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// maxSameName bounds how many files of one name SiteFile reads to pick one.
const maxSameName = 1000

// SiteFile returns the uploaded file a site serves for name in bucket, whoever asks:
// a site's routes are bound by the tenant's admin, whose binding makes the bucket's
// files public. It is the name-addressed file when there is one (meta.Store
// GetFileByName), otherwise, of the uploaded files with that name (files uploaded
// through /v1 may share a name), the most recently updated one; but in a bucket
// other roles than the admin may write (SiteBucketWritable), the one sharedBefore
// puts first, so a user's upload cannot displace a page. ENOTFOUND if there is
// none.
func (s *Service) SiteFile(ctx context.Context, bucket, name string) (*coffer.File, error) {
	f, err := s.meta.GetFileByName(ctx, bucket, name)
	if err == nil && f.IsUploaded {
		return f, nil
	}
	if err != nil && coffer.ErrorCode(err) != coffer.ENOTFOUND {
		return nil, err
	}
	page, err := s.meta.ListFiles(ctx, coffer.ListOptions{BucketID: bucket, Prefix: name, Limit: maxSameName})
	if coffer.ErrorCode(err) == coffer.ENOTFOUND || coffer.ErrorCode(err) == coffer.EINVALID {
		return nil, errFileNotFound()
	}
	if err != nil {
		return nil, err
	}
	shared := s.SiteBucketWritable(bucket)
	var pick *coffer.File
	for _, c := range page.Files { // ordered by name: the exact name comes first
		if c.Name != name {
			break
		}
		if pick == nil || !shared && c.UpdatedAt.After(pick.UpdatedAt) || shared && sharedBefore(c, pick) {
			pick = c
		}
	}
	if pick == nil {
		return nil, errFileNotFound()
	}
	return pick, nil
}

// sharedBefore reports whether a site serves a before b, two files of one name in a
// bucket other roles than the admin may write: a file with no uploader (the
// admin's, or a role's whose rules preset none) before a user's, so a user's upload
// or rename into the name never displaces the admin's page, nor squats a page the
// admin publishes later; then the first made (a replace keeps a file's place).
func sharedBefore(a, b *coffer.File) bool {
	if ua, ub := a.UploadedByUserID == "", b.UploadedByUserID == ""; ua != ub {
		return ua
	}
	return a.CreatedAt.Before(b.CreatedAt)
}

// OpenSiteFile opens the contents of file id for a site, whoever asks, through the
// hot-path caches (the row from the metadata cache, the bytes from the content
// cache). It returns ENOTFOUND when the file is gone or no longer named name in
// bucket (a cached id gone stale): the caller looks the name up again.
func (s *Service) OpenSiteFile(ctx context.Context, bucket, name, id string) (*coffer.File, blob.Reader, error) {
	f, _, r, err := s.OpenFile(ctx, coffer.AdminPrincipal(), id)
	if err != nil {
		return nil, nil, err
	}
	if f.BucketID != bucket || f.Name != name {
		r.Close()
		return nil, nil, errFileNotFound()
	}
	return f, r, nil
}

// SiteBucketWritable reports whether roles other than the admin may write files in
// bucket by the current rules (access.RuleSet.Writable): a site then serves the
// bucket's files as any of their users' content (sandboxed active types, a
// precompressed sibling only from the document's own uploader).
func (s *Service) SiteBucketWritable(bucket string) bool { return s.rules.Load().Writable(bucket) }
