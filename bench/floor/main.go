// Command floor is the net/http floor of coffer's hot path: the least a net/http
// server does to serve one file on disk, http.ServeContent of an open file (a pool of
// open handles, as coffer's content cache keeps hot files open), with no routing,
// metadata, authentication, logs or metrics. Run beside coffer and nginx under the
// same load, it tells how much of coffer's CPU per request is net/http's own (issue
// 17, item 2):
//
//	go build -o /tmp/floor ./bench/floor && /tmp/floor -listen 127.0.0.1:8099 -file small.bin
//
// Every GET or HEAD of any path answers the file (sendfile, Range and conditionals as
// ServeContent does them). It binds loopback only unless told otherwise.
//
// With -raw it is the floor of any Go server instead: no net/http, a goroutine per
// connection that reads up to the end of each request head and answers a fixed
// header and the file with sendfile (no parsing, no checks: a measuring device, not a
// server). coffer's HTTP/1.1 fast path sits between the two.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sync"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:8099", "address to serve on")
	file := flag.String("file", "", "the file to serve")
	raw := flag.Bool("raw", false, "serve without net/http (the Go floor)")
	flag.Parse()
	if *file == "" {
		log.Fatal("floor: -file is required")
	}
	if *raw {
		log.Fatal(serveRaw(*listen, *file))
	}
	h, err := newHandler(*file)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// handler serves one file from a pool of open handles.
type handler struct {
	name    string
	modtime time.Time
	files   sync.Pool // *os.File, each used by one request at a time
}

// newHandler checks that name opens and returns its handler.
func newHandler(name string) (*handler, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("floor: %s is not a regular file", name)
	}
	return &handler{name: name, modtime: st.ModTime()}, nil
}

// ServeHTTP answers r with the file through http.ServeContent (sendfile over TCP).
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f, _ := h.files.Get().(*os.File)
	if f == nil {
		var err error
		if f, err = os.Open(h.name); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	http.ServeContent(w, r, h.name, h.modtime, f)
	h.files.Put(f)
}
