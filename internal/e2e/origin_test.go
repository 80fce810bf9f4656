package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// origin is an upstream web server on 127.0.0.1 for sites' tests: it serves the
// objects set on it with ETags (answering conditional requests with 304), counts
// the requests of every path, and misbehaves on purpose on a few paths:
//
//	/short/...    says Content-Length 4096 and sends 1000 bytes, then closes;
//	/endless/...  sends bytes without Content-Length, without end;
//	/huge/...     says Content-Length 10 GB and sends as fast as it is read;
//	/slow/...     waits Delay before answering the object of the rest of the path.
type origin struct {
	t   *testing.T
	srv *httptest.Server
	mu  sync.Mutex
	obj map[string]object
	n   map[string]int
	// Delay is /slow/'s wait.
	Delay time.Duration
}

// object is one object an origin serves.
type object struct {
	body, ctype, cacheControl, tags string
}

// newOrigin starts an origin, stopped at cleanup.
func newOrigin(t *testing.T) *origin {
	o := &origin{t: t, obj: map[string]object{}, n: map[string]int{}, Delay: 300 * time.Millisecond}
	o.srv = httptest.NewServer(http.HandlerFunc(o.serve))
	t.Cleanup(o.srv.Close)
	return o
}

// URL is the origin's base URL, with a trailing slash.
func (o *origin) URL() string { return o.srv.URL + "/" }

// set makes the origin serve body at path (with optional Cache-Control and
// Surrogate-Key headers).
func (o *origin) set(path, body, ctype, cacheControl, tags string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.obj[path] = object{body: body, ctype: ctype, cacheControl: cacheControl, tags: tags}
}

// count returns how many requests path got.
func (o *origin) count(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[path]
}

// stop closes the origin: from now on its address refuses connections.
func (o *origin) stop() { o.srv.Close() }

func (o *origin) serve(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	o.n[r.URL.Path]++
	o.mu.Unlock()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/short/"):
		o.short(w)
	case strings.HasPrefix(p, "/endless/"):
		o.stream(w, r, -1)
	case strings.HasPrefix(p, "/huge/"):
		o.stream(w, r, 10<<30)
	case strings.HasPrefix(p, "/slow/"):
		time.Sleep(o.Delay)
		o.object(w, r, strings.TrimPrefix(p, "/slow"))
	default:
		o.object(w, r, p)
	}
}

// object answers the object at path, or 404.
func (o *origin) object(w http.ResponseWriter, r *http.Request, path string) {
	o.mu.Lock()
	ob, ok := o.obj[path]
	o.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256([]byte(ob.body))
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Content-Type", ob.ctype)
	if ob.cacheControl != "" {
		h.Set("Cache-Control", ob.cacheControl)
	}
	if ob.tags != "" {
		h.Set("Surrogate-Key", ob.tags)
	}
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(ob.body)))
	w.Write([]byte(ob.body))
}

// short promises 4096 bytes, sends 1000 and closes the connection.
func (o *origin) short(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		o.t.Error(err)
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 4096\r\n\r\n%s", strings.Repeat("s", 1000))
	buf.Flush()
}

// stream sends 'x' bytes: size of them, or without end (size < 0), until the
// client goes.
func (o *origin) stream(w http.ResponseWriter, r *http.Request, size int64) {
	w.Header().Set("Content-Type", "application/octet-stream")
	if size >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	chunk := []byte(strings.Repeat("x", 64<<10))
	for sent := int64(0); size < 0 || sent < size; sent += int64(len(chunk)) {
		if _, err := w.Write(chunk); err != nil || r.Context().Err() != nil {
			return
		}
	}
}
