package tenant

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// Bounds of a storage target.
const (
	maxPrefixLen = 512
	maxRegionLen = 32
)

// validate checks a storage target: the shared store takes no other field; an S3
// target needs a valid bucket name and both keys (never the server's own
// credentials).
func (st Storage) validate() error {
	switch st.Kind {
	case "", StorageShared:
		if st != (Storage{Kind: st.Kind}) {
			return invalid("storage", `only "kind" is allowed with the shared store (its prefix is the tenant's own)`)
		}
		return nil
	case StorageS3:
	default:
		return invalid("storage.kind", `must be "shared" or "s3"`)
	}
	if !validBucketName(st.Bucket) {
		return invalid("storage.bucket", "must be an S3 bucket name: 3 to 63 of a-z, 0-9, '.' and '-', starting and ending with a letter or digit")
	}
	if st.Endpoint != "" && !validEndpoint(st.Endpoint) {
		return invalid("storage.endpoint", "must be http(s)://host[:port] with no path, query or user")
	}
	if len(st.Region) > maxRegionLen || strings.Trim(st.Region, "abcdefghijklmnopqrstuvwxyz0123456789-") != "" {
		return invalid("storage.region", "at most %d of a-z, 0-9 and '-'", maxRegionLen)
	}
	if !validPrefix(st.Prefix) {
		return invalid("storage.prefix", "at most %d bytes of UTF-8 without control characters, not starting with '/', no '..' segment", maxPrefixLen)
	}
	return st.validateKeys()
}

// validateKeys checks the S3 credentials: both present and bounded.
func (st Storage) validateKeys() error {
	if st.AccessKeyID == "" || len(st.AccessKeyID) > 128 || strings.ContainsFunc(st.AccessKeyID, notPrintable) {
		return invalid("storage.accessKeyId", "required with kind s3: 1 to 128 printable characters")
	}
	limit := maxSecretLen
	if IsSealed(st.SecretAccessKey) {
		limit = 2 * maxSecretLen // base64 of the nonce, the ciphertext and the tag
	}
	if st.SecretAccessKey == "" || len(st.SecretAccessKey) > limit {
		return invalid("storage.secretAccessKey", "required with kind s3: 1 to %d bytes", maxSecretLen)
	}
	return nil
}

// notPrintable reports a rune outside printable ASCII (space excluded).
func notPrintable(r rune) bool { return r <= ' ' || r >= 0x7f }

// validBucketName checks S3's bucket naming rules (not the IP-address form).
func validBucketName(b string) bool {
	if len(b) < 3 || len(b) > 63 || strings.Contains(b, "..") {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || i == len(b)-1 || c != '.' && c != '-') {
			return false
		}
	}
	return true
}

// validEndpoint accepts an absolute http or https URL naming only a host.
func validEndpoint(e string) bool {
	u, err := url.Parse(e)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		u.User == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == "" && u.Fragment == "" && !u.ForceQuery
}

// validPrefix accepts a key prefix that cannot climb out of its place.
func validPrefix(p string) bool {
	if len(p) > maxPrefixLen || !utf8.ValidString(p) || strings.HasPrefix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return false
		}
	}
	return !strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f })
}
