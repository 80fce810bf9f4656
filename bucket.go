package coffer

import (
	"fmt"
	"strings"
	"time"
)

// DefaultBucketID names the bucket that exists after first start.
const DefaultBucketID = "default"

// Bucket holds the settings shared by the files in it.
type Bucket struct {
	ID                   string
	MinUploadFileSize    int64
	MaxUploadFileSize    int64
	AllowedMimeTypes     []string // empty: any; entries like "image/*" allowed
	CacheControl         string
	DownloadExpiration   int64 // seconds, for presigned URLs
	PresignedURLsEnabled bool
	Public               bool // anonymous read
	AllowInline          bool // serve script-capable types inline
	// CacheControlShared sends CacheControl (and Surrogate-Control) on every download,
	// as hasura-storage does; off, only anonymous downloads get them and the others
	// are private (PrivateCacheControl).
	CacheControlShared bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
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
	MinUploadFileSize    *int64
	MaxUploadFileSize    *int64
	AllowedMimeTypes     *[]string
	CacheControl         *string
	DownloadExpiration   *int64
	PresignedURLsEnabled *bool
	Public               *bool
	AllowInline          *bool
	CacheControlShared   *bool
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
	if u.CacheControlShared != nil {
		b.CacheControlShared = *u.CacheControlShared
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
		return InvalidField("minUploadFileSize", "minUploadFileSize must be >= 0")
	case b.MaxUploadFileSize < 0:
		return InvalidField("maxUploadFileSize", "maxUploadFileSize must be >= 0")
	case b.MaxUploadFileSize > 0 && b.MinUploadFileSize > b.MaxUploadFileSize:
		return InvalidField("minUploadFileSize", "minUploadFileSize must not exceed maxUploadFileSize")
	case b.DownloadExpiration < 1 || b.DownloadExpiration > MaxDownloadExpiration:
		return InvalidField("downloadExpiration", fmt.Sprintf("downloadExpiration must be between 1 and %d seconds", MaxDownloadExpiration))
	case len(b.CacheControl) > MaxCacheControl:
		return InvalidField("cacheControl", fmt.Sprintf("cacheControl is longer than %d bytes", MaxCacheControl))
	}
	if err := checkCacheControl(b.CacheControl); err != nil {
		return err
	}
	for _, m := range b.AllowedMimeTypes {
		if !validMimePattern(m) {
			return InvalidField("allowedMimeTypes", fmt.Sprintf("allowedMimeTypes: %q is not a MIME type or type/* pattern", m))
		}
	}
	return nil
}

// MaxCacheControl bounds a bucket's cacheControl.
const MaxCacheControl = 256

// checkCacheControl checks that v is empty or a Cache-Control field value (RFC 9111
// §5.2): comma-separated directives token [ "=" ( token / quoted-string ) ], with
// optional spaces or tabs around the commas, printable ASCII only. It is sent as is
// in the Cache-Control and Surrogate-Control headers of downloads that shared caches
// may store (PrivateCacheControl for the others), so a control character (CR, LF...)
// or a stray byte must never get in.
func checkCacheControl(v string) error { return eachDirective(v, nil) }

// eachDirective calls fn (if not nil) with the name and the whole text of each
// directive of v, and returns checkCacheControl's error if v is not a list of them.
func eachDirective(v string, fn func(name, directive string)) error {
	for i := 0; i < len(v); {
		i = skipOWS(v, i)
		start := i
		n := tokenLen(v[i:])
		if n == 0 {
			return badCacheControl(v, i, "a directive name")
		}
		i += n
		name := v[start:i]
		if i < len(v) && v[i] == '=' {
			i++
			if n = tokenLen(v[i:]); n == 0 {
				n = quotedLen(v[i:])
			}
			if n == 0 {
				return badCacheControl(v, i, "a token or a quoted string after '='")
			}
			i += n
		}
		if fn != nil {
			fn(name, v[start:i])
		}
		if i = skipOWS(v, i); i < len(v) && (v[i] != ',' || i == len(v)-1) {
			return badCacheControl(v, i, "',' and another directive")
		}
		i++
	}
	return nil
}

// PrivateCacheControl returns the Cache-Control of a download that only the client's
// own cache may store (RFC 9111 §5.2.2.7), made from a bucket's cacheControl v:
// "private", then v's directives but those addressed to shared caches (public,
// private, s-maxage, proxy-revalidate). "max-age=3600" gives "private, max-age=3600";
// "" gives "private". One allocation when v has none of those (a download's usual
// case).
func PrivateCacheControl(v string) string {
	shared := 0
	eachDirective(v, func(name, _ string) {
		if sharedDirective(name) {
			shared++
		}
	})
	switch {
	case v == "":
		return "private"
	case shared == 0:
		return "private, " + v
	}
	b := make([]byte, 0, len("private, ")+len(v))
	b = append(b, "private"...)
	eachDirective(v, func(name, directive string) {
		if !sharedDirective(name) {
			b = append(append(b, ", "...), directive...)
		}
	})
	return string(b)
}

// sharedDirective reports whether a Cache-Control directive name speaks to shared
// caches.
func sharedDirective(name string) bool {
	for _, d := range [...]string{"public", "private", "s-maxage", "proxy-revalidate"} {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

func badCacheControl(v string, at int, want string) error {
	return InvalidField("cacheControl", fmt.Sprintf("cacheControl: %q is not a list of cache directives (like \"max-age=3600, public\"): expected %s at byte %d", v, want, at))
}

func skipOWS(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// tokenLen is the length of the RFC 9110 token at the start of s.
func tokenLen(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return i
		}
	}
	return len(s)
}

// quotedLen is the length of the RFC 9110 quoted-string at the start of s (ASCII
// only: obs-text is refused), 0 if there is none.
func quotedLen(s string) int {
	if s == "" || s[0] != '"' {
		return 0
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return i + 1
		case c == '\\' && i+1 < len(s) && (s[i+1] == '\t' || s[i+1] >= ' ' && s[i+1] < 0x7f):
			i++
		case c != '\t' && (c < ' ' || c >= 0x7f):
			return 0
		}
	}
	return 0
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
