package meta

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"

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

// DecodeCursor parses a cursor made by EncodeCursor: EINVALID if it is malformed.
func DecodeCursor(c string) (name, id string, err error) {
	bad := coffer.Errorf(coffer.EINVALID, "invalid cursor")
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", "", bad
	}
	var v [2]string
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", "", bad
	}
	id, ok := FileID(v[1])
	if !ok {
		return "", "", bad
	}
	return v[0], id, nil
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
