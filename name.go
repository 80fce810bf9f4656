package coffer

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"
)

// MaxNameBytes bounds a file name after NFC normalisation (S3's key limit).
const MaxNameBytes = 1024

// CleanName validates an untrusted file name and returns it in NFC. Names are
// slash-separated paths like "avatars/2024/me.png"; refused: empty, non-UTF-8, NUL and
// other control characters, bidirectional controls and invisible characters (see
// invisibleNames), absolute paths, Windows drive or UNC paths, backslashes, "." or ".."
// segments, empty segments, and names over MaxNameBytes.
func CleanName(s string) (string, error) {
	if s == "" {
		return "", Errorf(EINVALID, "file name is empty")
	}
	if !utf8.ValidString(s) {
		return "", Errorf(EINVALID, "file name is not valid UTF-8")
	}
	s = norm.NFC.String(s)
	if len(s) > MaxNameBytes {
		return "", Errorf(EINVALID, "file name is longer than %d bytes", MaxNameBytes)
	}
	for _, r := range s {
		if r == 0 || unicode.IsControl(r) || r == utf8.RuneError {
			return "", Errorf(EINVALID, "file name contains a control character")
		}
		if r == '\\' {
			return "", Errorf(EINVALID, "file name contains a backslash")
		}
	}
	if err := checkInvisible(s); err != nil {
		return "", err
	}
	if s[0] == '/' {
		return "", Errorf(EINVALID, "file name must not be an absolute path")
	}
	if len(s) >= 2 && s[1] == ':' && isASCIILetter(s[0]) {
		return "", Errorf(EINVALID, "file name must not start with a drive letter")
	}
	for _, seg := range strings.Split(s, "/") {
		switch seg {
		case "":
			return "", Errorf(EINVALID, "file name has an empty path segment")
		case ".", "..":
			return "", Errorf(EINVALID, "file name must not contain . or .. segments")
		}
	}
	return s, nil
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// ValidateBucketID checks a bucket id: 1..63 characters of a-z, 0-9, '-', '_', '.',
// starting with a letter or digit.
func ValidateBucketID(id string) error {
	if len(id) == 0 || len(id) > 63 {
		return Errorf(EINVALID, "bucket id must be 1 to 63 characters")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || (i > 0 && (c == '-' || c == '_' || c == '.'))
		if !ok {
			return Errorf(EINVALID, "bucket id %q: use a-z, 0-9, '-', '_' and '.', starting with a letter or digit", id)
		}
	}
	if strings.Contains(id, "..") {
		return Errorf(EINVALID, "bucket id must not contain ..")
	}
	return nil
}

// ParseFileID validates a client-supplied file id: a UUID, returned in canonical
// lower-case form.
func ParseFileID(s string) (string, error) {
	if len(s) != 36 {
		return "", Errorf(EINVALID, "file id must be a UUID")
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", Errorf(EINVALID, "file id must be a UUID")
	}
	if !hasUpper(s) { // already canonical: 36 characters, hyphens placed, lower case
		return s, nil
	}
	return u.String(), nil
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// NewFileID returns a random (v4) file id.
func NewFileID() string { return uuid.NewString() }
