package api

import (
	"encoding/json"
	"net/http"
	"strings"
)

// IndexInfo is what the server's root page says: where each face is.
type IndexInfo struct {
	Version string
	// Console is true when the web console is served (at console/ below the root).
	Console bool
	// RPC lists the management API's services (their full names).
	RPC []string
}

// Index is the face of the root path "/" alone: a browser (Accept: text/html) is
// sent to the web console when it is on; any other client gets a small JSON index
// of the faces (version, console, the /v1 API and its OpenAPI document, the
// management API's services, the health check). Every other path stays the other
// faces'.
type Index struct {
	body     []byte // the JSON index, rendered once
	console  bool
	prefixes []string
}

var _ Face = (*Index)(nil)

// NewIndex returns the root face for info.
func NewIndex(info IndexInfo) *Index {
	doc := struct {
		Name    string   `json:"name"`
		Version string   `json:"version"`
		Console *string  `json:"console"`
		API     string   `json:"api"`
		OpenAPI string   `json:"openapi"`
		RPC     []string `json:"rpc"`
		Health  string   `json:"health"`
	}{Name: "coffer", Version: info.Version, API: "/v1/", OpenAPI: "/v1/openapi.yaml", RPC: info.RPC, Health: "/healthz"}
	if info.Console {
		c := "/console/"
		doc.Console = &c
	}
	if doc.RPC == nil {
		doc.RPC = []string{}
	}
	b, _ := json.MarshalIndent(doc, "", "  ") // fixed types: cannot fail
	return &Index{body: append(b, '\n'), console: info.Console, prefixes: []string{"/"}}
}

// Prefixes implements Face: the root alone (Router treats "/" as exact).
func (x *Index) Prefixes() []string { return x.prefixes }

// ServeHTTP implements http.Handler.
func (x *Index) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	h := w.Header()
	h.Set("Vary", "Accept")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	if x.console && wantsHTML(r.Header.Get("Accept")) {
		// Relative to the path the client sent: behind a /t/{tenant}/ prefix the
		// console is the tenant's, under the same prefix.
		path, _, _ := strings.Cut(r.RequestURI, "?")
		if !strings.HasSuffix(path, "/") {
			path += "/"
		}
		if !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
			path = "/" // an absolute-form or odd target: the server's own console
		}
		http.Redirect(w, r, path+"console/", http.StatusSeeOther)
		return
	}
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(x.body)
}

// wantsHTML reports whether an Accept header asks for HTML (as browsers' do
// for a page), not merely accepting anything.
func wantsHTML(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, _, _ := strings.Cut(part, ";")
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "text/html", "application/xhtml+xml":
			return true
		}
	}
	return false
}
