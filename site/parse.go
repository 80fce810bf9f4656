package site

import (
	"fmt"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// MaxDocSize bounds a site document.
const MaxDocSize = 256 << 10

// Bounds of the document's fields.
const (
	maxIDLen       = 63
	maxHosts       = 50
	maxRoutes      = 200
	maxTags        = 20
	maxTagLen      = 128
	maxHeaders     = 50
	maxHeaderRules = 100
	maxCacheRules  = 50
	maxWebhooks    = 10
	maxURLLen      = 2048
	maxValueLen    = 4096
	maxSecretLen   = 1024
	maxPrefixLen   = 512
	maxDuration    = 30 * 24 * 3600 * 1e9 // 30 days, in nanoseconds
	maxTimeout     = 10 * 60 * 1e9        // 10 minutes
)

// Parse decodes and validates a site document: one JSON object of at most
// MaxDocSize bytes, no unknown fields, no trailing data. Returns EINVALID with the
// field at fault ("routes[2].target.http.url"), ETOOLARGE past MaxDocSize.
func Parse(doc []byte) (*Document, error) {
	if len(doc) > MaxDocSize {
		return nil, coffer.Errorf(coffer.ETOOLARGE, "site: larger than %d bytes", MaxDocSize)
	}
	s := &Document{}
	if err := coffer.DecodeDocument(doc, s, "site"); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// invalid returns the EINVALID error of the field at, naming it as Field.
func invalid(at, format string, args ...any) error {
	return coffer.InvalidField(at, at+": "+fmt.Sprintf(format, args...))
}

// Validate checks every field, in written (plaintext secrets) or stored (sealed)
// form. Errors are EINVALID with Field the path in the document
// ("routes[2].target.http.url"); none repeats a secret.
func (s *Document) Validate() error {
	if !validID(s.ID) {
		return invalid("id", `must be 1 to %d characters of a-z, 0-9 and "-"`, maxIDLen)
	}
	if err := s.validateHosts(); err != nil {
		return err
	}
	if len(s.Routes) == 0 || len(s.Routes) > maxRoutes {
		return invalid("routes", "must have 1 to %d routes", maxRoutes)
	}
	for i := range s.Routes {
		if err := s.Routes[i].validate(fmt.Sprintf("routes[%d]", i)); err != nil {
			return err
		}
	}
	if err := validDocPath("notFound", s.NotFound); err != nil {
		return err
	}
	if err := validHeaderRules("headers", s.Headers); err != nil {
		return err
	}
	return validWebhooks(s.PurgeWebhooks)
}

// validID reports whether id is [a-z0-9-]{1,63}.
func validID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validateHosts normalizes the hosts in place and refuses duplicates.
func (s *Document) validateHosts() error {
	if len(s.Hosts) == 0 || len(s.Hosts) > maxHosts {
		return invalid("hosts", "must have 1 to %d hosts", maxHosts)
	}
	seen := make(map[string]bool, len(s.Hosts))
	for i, h := range s.Hosts {
		at := fmt.Sprintf("hosts[%d]", i)
		n, err := tenant.NormalizeHost(h)
		if err != nil || strings.ContainsAny(h, "/@") {
			return invalid(at, "%q is not a host name", h)
		}
		if seen[n] {
			return invalid(at, "%q is listed twice", n)
		}
		seen[n] = true
		s.Hosts[i] = n
	}
	return nil
}

// validDocPath checks an optional document path (notFound, fallback): "" or a
// request path as CleanPath accepts it, not ending in "/".
func validDocPath(at, p string) error {
	if p == "" {
		return nil
	}
	if c, err := CleanPath(p); err != nil || c != p || strings.HasSuffix(p, "/") {
		return invalid(at, `must be a clean path to a document, such as "/404.html"`)
	}
	return nil
}

// validWebhooks checks the purge webhooks' URLs and secrets.
func validWebhooks(hooks []PurgeWebhook) error {
	if len(hooks) > maxWebhooks {
		return invalid("purgeWebhooks", "at most %d", maxWebhooks)
	}
	for i, h := range hooks {
		at := fmt.Sprintf("purgeWebhooks[%d]", i)
		if err := validURL(at+".url", h.URL, false); err != nil {
			return err
		}
		if len(h.Secret) > maxSecretLen || !printable(h.Secret) {
			return invalid(at+".secret", "must be at most %d bytes of printable ASCII", maxSecretLen)
		}
	}
	return nil
}

// printable reports whether v is printable ASCII without spaces.
func printable(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}
