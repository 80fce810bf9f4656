package blob

import (
	"strings"

	"github.com/coffer/coffer"
)

// MaxKeyBytes bounds a blob key.
const MaxKeyBytes = 512

// ValidateKey enforces the key grammar of the driver contract.
func ValidateKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyBytes {
		return coffer.Errorf(coffer.EINVALID, "blob key must be 1 to %d bytes", MaxKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-' || c == '/') {
			return coffer.Errorf(coffer.EINVALID, "blob key has a character outside [A-Za-z0-9._/-]")
		}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return coffer.Errorf(coffer.EINVALID, "blob key has an empty, . or .. segment")
		}
	}
	return nil
}
