package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// RequireToken serves h only to requests with "Authorization: Bearer <token>"; the
// others get 401. An empty token lets every request through.
func RequireToken(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !TokenMatches(token, r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
			http.Error(w, "/metrics needs Authorization: Bearer <the --metrics-token>", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TokenMatches reports whether r carries "Authorization: Bearer <token>" (compared
// in constant time); never for an empty token.
func TokenMatches(token string, r *http.Request) bool {
	if token == "" {
		return false
	}
	want := sha256.Sum256([]byte(token))
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(sum[:], want[:]) == 1
}
