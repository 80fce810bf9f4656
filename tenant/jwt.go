package tenant

import (
	"encoding/json"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
)

// fieldJWTKey is the field a sealed HMAC key of the JWT document is bound to.
const fieldJWTKey = "jwt.key"

// jwtDoc is the JWT document as a map, to read or replace its "type" and "key"
// without knowing its other fields (package auth owns them).
type jwtDoc map[string]json.RawMessage

// decodeJWTDoc decodes doc as a JSON object.
func decodeJWTDoc(doc json.RawMessage) (jwtDoc, error) {
	var m jwtDoc
	if err := json.Unmarshal(doc, &m); err != nil || m == nil {
		return nil, invalid("jwt", "not a JSON object")
	}
	return m, nil
}

// str returns the string field name ("" if absent or not a string).
func (m jwtDoc) str(name string) string {
	var s string
	json.Unmarshal(m[name], &s)
	return s
}

// withKey returns the document with "key" set to key.
func (m jwtDoc) withKey(key string) json.RawMessage {
	m["key"], _ = json.Marshal(key)
	out, _ := json.Marshal(m) // a map of raw messages that came from JSON: cannot fail
	return out
}

// sealJWTKey seals the HMAC secret of an HS* JWT document (public keys of the
// other algorithms are not secret and stay as written, so they are validated
// as stored). A key already sealed must open for this tenant.
func (s *Settings) sealJWTKey(sealer *Sealer, tenantID string) error {
	if len(s.JWT) == 0 || string(s.JWT) == "null" {
		return nil
	}
	m, err := decodeJWTDoc(s.JWT)
	if err != nil {
		return err
	}
	key := m.str("key")
	if !strings.HasPrefix(m.str("type"), "HS") || key == "" {
		return nil
	}
	if err := sealField(sealer, &key, tenantID, fieldJWTKey); err != nil {
		return err
	}
	s.JWT = m.withKey(key)
	return nil
}

// JWTConfig returns the tenant's parsed JWT config, its HMAC secret opened (nil if
// the settings have none). Returns EINVALID if it does not parse or open.
func (s *Settings) JWTConfig(sealer *Sealer, tenantID string) (*auth.JWTConfig, error) {
	if len(s.JWT) == 0 || string(s.JWT) == "null" {
		return nil, nil
	}
	m, err := decodeJWTDoc(s.JWT)
	if err != nil {
		return nil, err
	}
	doc := s.JWT
	if key := m.str("key"); IsSealed(key) {
		plain, err := sealer.Open(key, sealContext(tenantID, fieldJWTKey))
		if err != nil {
			return nil, invalid("jwt.key", "%s", coffer.ErrorMessage(err))
		}
		doc = m.withKey(plain)
	}
	c, err := auth.ParseJWTConfig(string(doc))
	if err != nil {
		return nil, coffer.InvalidField("jwt", coffer.ErrorMessage(err))
	}
	return c, nil
}
