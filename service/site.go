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
// other roles than the admin may write (SiteBucketWritable), the first one made, so
// an upload cannot displace a page (a replace keeps a file's place). ENOTFOUND if
// there is none.
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
	first := s.SiteBucketWritable(bucket)
	var pick *coffer.File
	for _, c := range page.Files { // ordered by name: the exact name comes first
		if c.Name != name {
			break
		}
		if pick == nil || !first && c.UpdatedAt.After(pick.UpdatedAt) || first && c.CreatedAt.Before(pick.CreatedAt) {
			pick = c
		}
	}
	if pick == nil {
		return nil, errFileNotFound()
	}
	return pick, nil
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
