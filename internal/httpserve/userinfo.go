package httpserve

import "net/http"

// RefuseUserinfo refuses, before any face or host routing sees it, a request whose
// target carries userinfo ("GET http://a.test@b.test/ HTTP/1.1"): RFC 9110 §4.2.4
// has a recipient treat it as an error, and its Host would be b.test while a
// reader of the line may see a.test. The fast path only takes origin-form targets,
// so it passes every request on to Next.
type RefuseUserinfo struct{ Next http.Handler }

var _ FastHandler = RefuseUserinfo{}

// Prefixes returns the prefixes of the face behind it (an api.Face, as the sites'
// front does), so a router may put another face beside coffer's; nil if Next has none.
func (p RefuseUserinfo) Prefixes() []string {
	if face, ok := p.Next.(interface{ Prefixes() []string }); ok {
		return face.Prefixes()
	}
	return nil
}

// ServeHTTP implements http.Handler.
func (p RefuseUserinfo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.User != nil {
		w.Header().Set("Connection", "close")
		http.Error(w, "bad request: userinfo (user@) is not allowed in the request target", http.StatusBadRequest)
		return
	}
	p.Next.ServeHTTP(w, r)
}

// ServeFast implements FastHandler.
func (p RefuseUserinfo) ServeFast(req *FastRequest, w *FastWriter) bool {
	if fh, ok := p.Next.(FastHandler); ok {
		return fh.ServeFast(req, w)
	}
	return false
}
