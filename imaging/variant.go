package imaging

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// A variant is a file's image transformed by some canonical options (Canonical). The
// names below identify variants wherever they are kept or served: the variant cache
// persists them under VariantKey, the sweeper finds the file of a persisted one with
// VariantFileID, and responses carry VariantTag as their ETag.

// VariantPrefix starts every persisted variant's blob key: "v/<file id>/<hash>".
const VariantPrefix = "v/"

// VariantTag returns the ETag of a variant: derived from the source's etag and the
// canonical parameters, so it changes when either does.
func VariantTag(etag, canonical string) string {
	return `"` + variantHash(etag, canonical) + `"`
}

// variantHash identifies the variant of the source etag by canonical options.
func variantHash(etag, canonical string) string {
	h := sha256.Sum256([]byte(etag + "\n" + canonical))
	return hex.EncodeToString(h[:16])
}

// VariantKey returns the blob key of a persisted variant of file fileID (whose
// contents have etag) by canonical options.
func VariantKey(fileID, etag, canonical string) string {
	return VariantPrefix + fileID + "/" + variantHash(etag, canonical)
}

// VariantFileID returns the file id in a persisted variant's blob key; ok is false
// for other keys.
func VariantFileID(key string) (id string, ok bool) {
	rest, ok := strings.CutPrefix(key, VariantPrefix)
	if !ok {
		return "", false
	}
	id, _, ok = strings.Cut(rest, "/")
	return id, ok
}
