package coffer

import "time"

// DefaultBucketID names the bucket that exists after first start.
const DefaultBucketID = "default"

// Bucket holds the settings shared by the files in it.
type Bucket struct {
	ID                   string    `json:"id"`
	MinUploadFileSize    int64     `json:"minUploadFileSize"`
	MaxUploadFileSize    int64     `json:"maxUploadFileSize"`
	AllowedMimeTypes     []string  `json:"allowedMimeTypes"` // empty: any; entries like "image/*" allowed
	CacheControl         string    `json:"cacheControl"`
	DownloadExpiration   int64     `json:"downloadExpiration"` // seconds, for presigned URLs
	PresignedURLsEnabled bool      `json:"presignedUrlsEnabled"`
	Public               bool      `json:"public"`      // anonymous read
	AllowInline          bool      `json:"allowInline"` // serve script-capable types inline
	CreatedAt            time.Time `json:"createdAt"`
	UpdatedAt            time.Time `json:"updatedAt"`
}

// NewBucket returns a bucket with hasura-storage's defaults.
func NewBucket(id string) *Bucket {
	return &Bucket{
		ID:                   id,
		MinUploadFileSize:    1,
		MaxUploadFileSize:    50 * 1000 * 1000,
		CacheControl:         "max-age=3600",
		DownloadExpiration:   30,
		PresignedURLsEnabled: true,
	}
}

// BucketUpdate lists the fields to change; nil means unchanged.
type BucketUpdate struct {
	MinUploadFileSize    *int64    `json:"minUploadFileSize,omitempty"`
	MaxUploadFileSize    *int64    `json:"maxUploadFileSize,omitempty"`
	AllowedMimeTypes     *[]string `json:"allowedMimeTypes,omitempty"`
	CacheControl         *string   `json:"cacheControl,omitempty"`
	DownloadExpiration   *int64    `json:"downloadExpiration,omitempty"`
	PresignedURLsEnabled *bool     `json:"presignedUrlsEnabled,omitempty"`
	Public               *bool     `json:"public,omitempty"`
	AllowInline          *bool     `json:"allowInline,omitempty"`
}

// Apply copies the set fields of u into b.
func (u BucketUpdate) Apply(b *Bucket) {
	if u.MinUploadFileSize != nil {
		b.MinUploadFileSize = *u.MinUploadFileSize
	}
	if u.MaxUploadFileSize != nil {
		b.MaxUploadFileSize = *u.MaxUploadFileSize
	}
	if u.AllowedMimeTypes != nil {
		b.AllowedMimeTypes = *u.AllowedMimeTypes
	}
	if u.CacheControl != nil {
		b.CacheControl = *u.CacheControl
	}
	if u.DownloadExpiration != nil {
		b.DownloadExpiration = *u.DownloadExpiration
	}
	if u.PresignedURLsEnabled != nil {
		b.PresignedURLsEnabled = *u.PresignedURLsEnabled
	}
	if u.Public != nil {
		b.Public = *u.Public
	}
	if u.AllowInline != nil {
		b.AllowInline = *u.AllowInline
	}
}

// MaxDownloadExpiration caps presigned URL lifetimes (7 days, as AWS SigV4).
const MaxDownloadExpiration = 7 * 24 * 3600

// Validate checks the settings of b.
func (b *Bucket) Validate() error {
	if err := ValidateBucketID(b.ID); err != nil {
		return err
	}
	switch {
	case b.MinUploadFileSize < 0:
		return Errorf(EINVALID, "minUploadFileSize must be >= 0")
	case b.MaxUploadFileSize < 0:
		return Errorf(EINVALID, "maxUploadFileSize must be >= 0")
	case b.MaxUploadFileSize > 0 && b.MinUploadFileSize > b.MaxUploadFileSize:
		return Errorf(EINVALID, "minUploadFileSize must not exceed maxUploadFileSize")
	case b.DownloadExpiration < 1 || b.DownloadExpiration > MaxDownloadExpiration:
		return Errorf(EINVALID, "downloadExpiration must be between 1 and %d seconds", MaxDownloadExpiration)
	case len(b.CacheControl) > 256:
		return Errorf(EINVALID, "cacheControl is too long")
	}
	for _, m := range b.AllowedMimeTypes {
		if !validMimePattern(m) {
			return Errorf(EINVALID, "allowedMimeTypes: %q is not a MIME type or type/* pattern", m)
		}
	}
	return nil
}

func validMimePattern(m string) bool {
	if len(m) == 0 || len(m) > 255 {
		return false
	}
	slash := 0
	for _, c := range m {
		switch {
		case c == '/':
			slash++
		case c == '*', c == '.', c == '+', c == '-', c == '_',
			c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return slash == 1 && m[0] != '/' && m[len(m)-1] != '/'
}
