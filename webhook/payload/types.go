package payload

import (
	"encoding/json"
	"time"

	"github.com/coffer/coffer"
)

// File is a file in an event: every field of its metadata but where its bytes are
// kept (the blob key never leaves the server).
type File struct {
	ID               string          `json:"id"`
	BucketID         string          `json:"bucketId"`
	Name             string          `json:"name"`
	Size             int64           `json:"size"`
	MimeType         string          `json:"mimeType"`
	ETag             string          `json:"etag"`
	IsUploaded       bool            `json:"isUploaded"`
	UploadedByUserID string          `json:"uploadedByUserId"`
	Metadata         json.RawMessage `json:"metadata"` // as stored: "{}" when empty
	CreatedAt        time.Time       `json:"createdAt"`
	UpdatedAt        time.Time       `json:"updatedAt"`
}

// fromFile is the payload form of f (nil for nil).
func fromFile(f *coffer.File) *File {
	if f == nil {
		return nil
	}
	return &File{ID: f.ID, BucketID: f.BucketID, Name: f.Name, Size: f.Size, MimeType: f.MimeType,
		ETag: f.ETag, IsUploaded: f.IsUploaded, UploadedByUserID: f.UploadedByUserID,
		Metadata: f.Metadata, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// toFile is the file f carries (nil for nil), without a blob key.
func (f *File) toFile() *coffer.File {
	if f == nil {
		return nil
	}
	return &coffer.File{ID: f.ID, BucketID: f.BucketID, Name: f.Name, Size: f.Size, MimeType: f.MimeType,
		ETag: f.ETag, IsUploaded: f.IsUploaded, UploadedByUserID: f.UploadedByUserID,
		Metadata: f.Metadata, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

// Bucket is the bucket of a bucket event, with all its settings.
type Bucket struct {
	ID                   string    `json:"id"`
	MinUploadFileSize    int64     `json:"minUploadFileSize"`
	MaxUploadFileSize    int64     `json:"maxUploadFileSize"`
	AllowedMimeTypes     []string  `json:"allowedMimeTypes"`
	CacheControl         string    `json:"cacheControl"`
	DownloadExpiration   int64     `json:"downloadExpiration"`
	PresignedURLsEnabled bool      `json:"presignedUrlsEnabled"`
	Public               bool      `json:"public"`
	AllowInline          bool      `json:"allowInline"`
	CacheControlShared   bool      `json:"cacheControlShared"`
	CreatedAt            time.Time `json:"createdAt"`
	UpdatedAt            time.Time `json:"updatedAt"`
}

// fromBucket is the payload form of b (nil for nil).
func fromBucket(b *coffer.Bucket) *Bucket {
	if b == nil {
		return nil
	}
	return &Bucket{ID: b.ID, MinUploadFileSize: b.MinUploadFileSize, MaxUploadFileSize: b.MaxUploadFileSize,
		AllowedMimeTypes: b.AllowedMimeTypes, CacheControl: b.CacheControl, DownloadExpiration: b.DownloadExpiration,
		PresignedURLsEnabled: b.PresignedURLsEnabled, Public: b.Public, AllowInline: b.AllowInline,
		CacheControlShared: b.CacheControlShared, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

// toBucket is the bucket b carries (nil for nil).
func (b *Bucket) toBucket() *coffer.Bucket {
	if b == nil {
		return nil
	}
	return &coffer.Bucket{ID: b.ID, MinUploadFileSize: b.MinUploadFileSize, MaxUploadFileSize: b.MaxUploadFileSize,
		AllowedMimeTypes: b.AllowedMimeTypes, CacheControl: b.CacheControl, DownloadExpiration: b.DownloadExpiration,
		PresignedURLsEnabled: b.PresignedURLsEnabled, Public: b.Public, AllowInline: b.AllowInline,
		CacheControlShared: b.CacheControlShared, CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt}
}

// Rejection is the refused upload of a file.rejected event.
type Rejection struct {
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	BucketID  string    `json:"bucketId"`
	Name      string    `json:"name"`
	FileID    string    `json:"fileId,omitempty"`
	UserID    string    `json:"uploadedByUserId,omitempty"`
	Role      string    `json:"role"`
	Signature string    `json:"signature"`
	Size      int64     `json:"size"`
}

// fromRejection is the payload form of r (nil for nil).
func fromRejection(r *coffer.Rejection) *Rejection {
	if r == nil {
		return nil
	}
	return &Rejection{ID: r.ID, Time: r.Time, BucketID: r.BucketID, Name: r.Name, FileID: r.FileID,
		UserID: r.UserID, Role: r.Role, Signature: r.Signature, Size: r.Size}
}

// toRejection is the rejection r carries (nil for nil).
func (r *Rejection) toRejection() *coffer.Rejection {
	if r == nil {
		return nil
	}
	return &coffer.Rejection{ID: r.ID, Time: r.Time, BucketID: r.BucketID, Name: r.Name, FileID: r.FileID,
		UserID: r.UserID, Role: r.Role, Signature: r.Signature, Size: r.Size}
}
