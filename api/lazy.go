package api

import (
	"net/http"
	"sync"

	"github.com/coffer/coffer"
)

// Lazy is a face built on its first request: one whose handlers cost memory that
// most of the graphs holding it never use (a tenant's management API). Until then,
// and if building it fails, its refusals are written by Refusal without it.
type Lazy struct {
	Paths   []string                                        // its prefixes (Face.Prefixes), known without building it
	Refusal func(http.ResponseWriter, *http.Request, error) // the face's refusals
	Build   func() (http.Handler, error)
	// Unavailable is the message of the 503 answered when Build failed.
	Unavailable string
	once        sync.Once
	h           http.Handler
	err         error
}

var (
	_ Face    = (*Lazy)(nil)
	_ Refuser = (*Lazy)(nil)
)

// Prefixes implements Face.
func (f *Lazy) Prefixes() []string { return f.Paths }

// ServeHTTP implements http.Handler, building the face on the first request.
func (f *Lazy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.once.Do(func() { f.h, f.err = f.Build() })
	if f.err != nil {
		f.Refusal(w, r, coffer.Errorf(coffer.EUNAVAILABLE, "%s", f.Unavailable))
		return
	}
	f.h.ServeHTTP(w, r)
}

// Refuse implements Refuser.
func (f *Lazy) Refuse(w http.ResponseWriter, r *http.Request, err error) { f.Refusal(w, r, err) }
