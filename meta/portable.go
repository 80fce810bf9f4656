package meta

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coffer/coffer"
	"github.com/google/uuid"
)

// Helpers shared by the SQL stores so that they behave alike where the contract leaves
// room (limits, cursors, ids, metadata normalisation).

// Listing limits: ListOptions.Limit <= 0 means DefaultListLimit; larger than
// MaxListLimit is clamped.
const (
	DefaultListLimit = 100
	MaxListLimit     = 1000
)

// ListLimit clamps a requested page size to 1..MaxListLimit (<= 0 → DefaultListLimit).
func ListLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultListLimit
	case n > MaxListLimit:
		return MaxListLimit
	}
	return n
}

// EncodeCursor returns the opaque cursor that resumes a listing after (name, id).
func EncodeCursor(name, id string) string {
	b, _ := json.Marshal([2]string{name, id})
	return base64.RawURLEncoding.EncodeToString(b)
}

// EncodePrefixCursor returns the opaque cursor that resumes a listing with a
// delimiter after the common prefix p (which ends with the delimiter) and every name
// beginning with it.
func EncodePrefixCursor(p string) string {
	b, _ := json.Marshal([1]string{p})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a cursor made by EncodeCursor, or by EncodePrefixCursor, for
// which id is "" and name is the prefix. EINVALID if it is malformed.
func DecodeCursor(c string) (name, id string, err error) {
	bad := coffer.Errorf(coffer.EINVALID, "invalid cursor")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", bad
	}
	var v []string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", "", bad
	}
	switch {
	case len(v) == 1 && strings.HasSuffix(v[0], Delimiter):
		return v[0], "", nil
	case len(v) != 2:
		return "", "", bad
	}
	id, ok := FileID(v[1])
	if !ok {
		return "", "", bad
	}
	return v[0], id, nil
}

// Delimiter is the only delimiter a listing takes (ListOptions.Delimiter).
const Delimiter = "/"

// CheckDelimiter returns EINVALID unless d is "" or Delimiter.
func CheckDelimiter(d string) error {
	if d != "" && d != Delimiter {
		return coffer.InvalidField("delimiter", `delimiter must be "/" or "" (none)`)
	}
	return nil
}

// CommonPrefix returns the common prefix that name is listed as under prefix with
// delimiter d: prefix and the rest of name up to and including its first d; "" when
// d is "" or the rest holds no d (name is listed as itself). name begins with prefix.
func CommonPrefix(prefix, name, d string) string {
	if d == "" {
		return ""
	}
	if i := strings.Index(name[len(prefix):], d); i >= 0 {
		return name[:len(prefix)+i+len(d)]
	}
	return ""
}

// PrefixEnd returns the least valid UTF-8 string greater than every string that
// begins with p, in byte order: p with its last rune replaced by the next one
// ("photos/" -> "photos0"), dropping trailing runes that have none. ok is false when
// there is no such string (p is empty, or not valid UTF-8).
func PrefixEnd(p string) (end string, ok bool) {
	if !utf8.ValidString(p) {
		return "", false
	}
	for p != "" {
		r, n := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-n]
		switch {
		case r == utf8.MaxRune:
			continue
		case r == 0xD7FF: // the surrogates are not runes
			r = 0xE000
		default:
			r++
		}
		return p + string(r), true
	}
	return "", false
}

// FileID returns id in canonical (lower-case, hyphenated) UUID form; ok is false if
// id is not a UUID. Stores use it so that every backend accepts the same ids: a lookup
// with a non-UUID id finds nothing (ENOTFOUND), an insert of one is EINVALID.
func FileID(id string) (string, bool) {
	if len(id) != 36 {
		return "", false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return "", false
	}
	if strings.ToLower(id) == id { // already canonical (ToLower does not allocate then)
		return id, true
	}
	return u.String(), true
}

// Now returns the current time as stores record it: UTC, truncated to microseconds.
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// PrepareInsert returns a copy of f ready to insert at now: canonical id (EINVALID if f.ID
// is not a UUID), normalised metadata, CreatedAt and UpdatedAt set.
func PrepareInsert(f *coffer.File, now time.Time) (*coffer.File, error) {
	c := *f
	id, ok := FileID(f.ID)
	if !ok {
		return nil, coffer.Errorf(coffer.EINVALID, "file id %q is not a UUID", f.ID)
	}
	md, err := coffer.ValidateMetadata(f.Metadata)
	if err != nil {
		return nil, err
	}
	c.ID, c.Metadata = id, md
	c.CreatedAt, c.UpdatedAt = now, now
	return &c, nil
}

// ApplyUpdate returns a copy of f with u applied and UpdatedAt set to now: EABORTED if
// u.IfBlobKey is set and differs from f.BlobKey, EINVALID for bad metadata.
func ApplyUpdate(f *coffer.File, u coffer.FileUpdate, now time.Time) (*coffer.File, error) {
	if u.IfBlobKey != nil && *u.IfBlobKey != f.BlobKey {
		return nil, coffer.Errorf(coffer.EABORTED, "file %s was changed concurrently", f.ID)
	}
	c := *f
	u.Apply(&c)
	md, err := coffer.ValidateMetadata(c.Metadata)
	if err != nil {
		return nil, err
	}
	c.Metadata, c.UpdatedAt = md, now
	return &c, nil
}
