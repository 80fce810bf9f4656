package httpserve

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"
)

// IDs makes request ids: a random per-process prefix and a counter, unique without
// a call to the system's random source per request.
type IDs struct {
	prefix string
	n      atomic.Uint64
}

// NewIDs returns a request id generator with a fresh random prefix.
func NewIDs() *IDs {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &IDs{prefix: hex.EncodeToString(b[:])}
}

// For returns r's id: the client's X-Request-Id when it is short and plain, else a
// fresh one.
func (g *IDs) For(r *http.Request) string { return g.Of(r.Header.Get("X-Request-Id")) }

// Of returns the id of a request whose X-Request-Id header is client ("" if none):
// client when it is short and plain, else a fresh one.
func (g *IDs) Of(client string) string {
	if client != "" && len(client) <= 64 && plainToken(client) {
		return client
	}
	return g.next()
}

// next returns a fresh id.
func (g *IDs) next() string {
	return g.prefix + strconv.FormatUint(g.n.Add(1), 36)
}

// plainToken reports whether s has only letters, digits, '-', '_' and '.'.
func plainToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
