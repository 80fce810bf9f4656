package coffer

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// File is one stored object's metadata. BlobKey is internal: where the bytes live in the
// blob store; it changes on every replace and is never shown to clients.
type File struct {
	ID               string
	BucketID         string
	Name             string
	Size             int64
	MimeType         string
	ETag             string // strong, quoted: "\"<md5 hex>\"" (or BLAKE3-256 hex: service.Config.ETag)
	IsUploaded       bool
	UploadedByUserID string
	Metadata         json.RawMessage // a JSON object; "{}" when empty
	CreatedAt        time.Time
	UpdatedAt        time.Time
	BlobKey          string
}

// FileUpdate lists the fields to change; nil means unchanged.
type FileUpdate struct {
	Name       *string
	Metadata   *json.RawMessage
	Size       *int64
	MimeType   *string
	ETag       *string
	IsUploaded *bool
	BlobKey    *string
	// IfBlobKey, when set, makes the update conditional: EABORTED unless the row's
	// current blob key equals it (guards concurrent replaces).
	IfBlobKey *string
}

// Apply copies the set fields of u into f (not UpdatedAt).
func (u FileUpdate) Apply(f *File) {
	if u.Name != nil {
		f.Name = *u.Name
	}
	if u.Metadata != nil {
		f.Metadata = *u.Metadata
	}
	if u.Size != nil {
		f.Size = *u.Size
	}
	if u.MimeType != nil {
		f.MimeType = *u.MimeType
	}
	if u.ETag != nil {
		f.ETag = *u.ETag
	}
	if u.IsUploaded != nil {
		f.IsUploaded = *u.IsUploaded
	}
	if u.BlobKey != nil {
		f.BlobKey = *u.BlobKey
	}
}

// ValidateMetadata is the one metadata normaliser: it checks that m is a JSON object of
// at most MaxMetadataBytes in valid UTF-8 and returns it compacted ("{}" for empty or
// null input). Keys, their order and numbers are kept as sent: m is validated, never
// decoded into a map. EINVALID otherwise.
func ValidateMetadata(m []byte) (json.RawMessage, error) {
	t := bytes.Trim(m, " \t\r\n") // JSON whitespace only
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}"), nil
	}
	if len(m) > MaxMetadataBytes {
		return nil, Errorf(EINVALID, "metadata is larger than %d bytes", MaxMetadataBytes)
	}
	if t[0] != '{' || !utf8.Valid(t) {
		return nil, Errorf(EINVALID, "metadata must be a JSON object")
	}
	var buf bytes.Buffer
	buf.Grow(len(t))
	if err := json.Compact(&buf, t); err != nil {
		return nil, Errorf(EINVALID, "metadata must be a JSON object")
	}
	return buf.Bytes(), nil
}

// MaxMetadataBytes bounds a file's metadata JSON.
const MaxMetadataBytes = 64 << 10

// Page is one page of a listing; Next is "" on the last page. With a delimiter
// (ListOptions.Delimiter), Prefixes are the common prefixes of the page, which sort
// among its Files by name (bytewise): a listing's entries are both, interleaved.
type Page struct {
	Files    []*File
	Prefixes []string
	Next     string
}

// ListOptions select files of one bucket, ordered by name then id.
type ListOptions struct {
	BucketID string
	Prefix   string
	Limit    int    // 1..1000; 0 means the default, 100 (meta.DefaultListLimit)
	Cursor   string // opaque, from a previous Page.Next
	// Delimiter, "/" or "" (none), lists one level below Prefix as S3 does: a file
	// whose name goes on past Prefix with a delimiter is listed as the common prefix
	// up to and including that delimiter ("photos/" + "2024/a.jpg" -> "photos/2024/"),
	// once, in place of every file under it. Limit counts files and prefixes.
	Delimiter string
	// Filter, when set, keeps only files it matches under Vars (a role's read rule):
	// applied in the query, so paging stays correct and nothing else leaks.
	Filter Expr
	Vars   map[string]string
}
