// Package auth turns request credentials into a coffer.Principal and signs and checks
// presigned URLs (PresignSigner chooses the server's keys: a secret, one derived from
// the admin secret, or one kept in the data dir).
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Query parameter names of a presigned URL.
const (
	ParamExpires   = "X-Coffer-Expires"
	ParamKeyID     = "X-Coffer-Key-Id"
	ParamSignature = "X-Coffer-Signature"
)

// Signer signs presigned URLs with the current key and verifies them with any key it
// knows, so a rotated-out key keeps its unexpired URLs valid while it is still listed.
type Signer struct {
	current string
	keys    map[string][]byte
	now     func() time.Time
}

// NewSigner returns a signer; currentID must be among keys. Key ids are short
// alphanumeric names; keys at least 32 bytes.
func NewSigner(currentID string, keys map[string][]byte) (*Signer, error) {
	if _, ok := keys[currentID]; !ok {
		return nil, coffer.Errorf(coffer.EINVALID, "presign key %q is not configured", currentID)
	}
	for id, k := range keys {
		if len(k) < 32 {
			return nil, coffer.Errorf(coffer.EINVALID, "presign key %q is shorter than 32 bytes", id)
		}
	}
	return &Signer{current: currentID, keys: keys, now: time.Now}, nil
}

// Sign returns the query (without '?') that authorises method on fileID until
// now+ttl. extra holds further signed parameters (image transforms, later).
func (s *Signer) Sign(method, fileID string, ttl time.Duration, extra url.Values) string {
	exp := s.now().Add(ttl).Unix()
	q := url.Values{}
	for k, v := range extra {
		q[k] = v
	}
	q.Set(ParamExpires, strconv.FormatInt(exp, 10))
	q.Set(ParamKeyID, s.current)
	q.Set(ParamSignature, s.mac(s.keys[s.current], method, fileID, q))
	return q.Encode()
}

// Verify checks a presigned query for method and fileID. Every failure is EFORBIDDEN
// with a message that says which check failed (none reveals the key).
func (s *Signer) Verify(method, fileID string, q url.Values) error {
	sig, kid, expS := q.Get(ParamSignature), q.Get(ParamKeyID), q.Get(ParamExpires)
	if sig == "" || kid == "" || expS == "" {
		return coffer.Errorf(coffer.EFORBIDDEN, "presigned URL is missing its signature, key id or expiry")
	}
	key, ok := s.keys[kid]
	if !ok {
		return coffer.Errorf(coffer.EFORBIDDEN, "presigned URL was signed with an unknown key")
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil {
		return coffer.Errorf(coffer.EFORBIDDEN, "presigned URL has a malformed expiry")
	}
	want := s.mac(key, method, fileID, q)
	if subtle.ConstantTimeCompare([]byte(want), []byte(sig)) != 1 {
		return coffer.Errorf(coffer.EFORBIDDEN, "presigned URL signature does not match")
	}
	if s.now().Unix() > exp {
		return coffer.Errorf(coffer.EFORBIDDEN, "presigned URL has expired")
	}
	return nil
}

// mac signs method, file id and every query parameter except the signature, in
// canonical (sorted, encoded) form, so adding, removing or changing any of them breaks
// the signature.
func (s *Signer) mac(key []byte, method, fileID string, q url.Values) string {
	c := url.Values{}
	for k, v := range q {
		if k != ParamSignature {
			c[k] = v
		}
	}
	h := hmac.New(sha256.New, key)
	h.Write([]byte("coffer-presign-v1\n" + strings.ToUpper(method) + "\n" + fileID + "\n" + c.Encode()))
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}
