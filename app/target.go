package app

import (
	"net/http"

	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/internal/httpserve"
)

// plainTarget refuses, before any face or host routing sees it, a request whose
// target carries userinfo ("GET http://a.test@b.test/ HTTP/1.1"): RFC 9110 §4.2.4
// has a recipient treat it as an error, and its Host would be b.test while a
// reader of the line may see a.test. The fast path only takes origin-form targets,
// so it passes every request on.
type plainTarget struct{ next http.Handler }

var (
	_ httpserve.FastHandler = plainTarget{}
	_ api.Face              = plainTarget{}
)

// Prefixes implements api.Face with the prefixes of the faces behind it (as
// the sites' front does), so a router may put another face beside coffer's.
func (p plainTarget) Prefixes() []string {
	if face, ok := p.next.(api.Face); ok {
		return face.Prefixes()
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (p plainTarget) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.User != nil {
		w.Header().Set("Connection", "close")
		http.Error(w, "bad request: userinfo (user@) is not allowed in the request target", http.StatusBadRequest)
		return
	}
	p.next.ServeHTTP(w, r)
}

// ServeFast implements httpserve.FastHandler.
func (p plainTarget) ServeFast(req *httpserve.FastRequest, w *httpserve.FastWriter) bool {
	if fh, ok := p.next.(httpserve.FastHandler); ok {
		return fh.ServeFast(req, w)
	}
	return false
}
