package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testSPA is a small manifest: index.html, 3 bundle files and 12 assets, of which
// the walk takes the 10 largest (asset00 and asset01, the smallest, never).
func testSPA() SPAManifest {
	m := SPAManifest{Seed: 7, Bundle: []SPAFile{{"index.html", 300}, {"assets/a-1.js", 4000}, {"assets/b-2.css", 900}, {"assets/c-3.js", 2500}}}
	for i := range 12 {
		m.Assets = append(m.Assets, SPAFile{Path: "img/asset" + string(rune('0'+i/10)) + string(rune('0'+i%10)) + ".jpg", Size: int64(1000 + 700*i)})
	}
	return m
}

// spaHit is one request the test site saw.
type spaHit struct {
	path, host, accept string
	start, end         time.Time
	bytes              int
}

// spaSite serves m's files (bundle files as a quarter of their size with
// Content-Encoding: br when the client accepts it), its manifest, and the answer of
// special for the paths it names; it records every request but the manifest's.
type spaSite struct {
	m       SPAManifest
	special map[string]func(w http.ResponseWriter)
	mu      sync.Mutex
	hits    []spaHit
}

func (s *spaSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := spaHit{path: strings.TrimPrefix(r.URL.Path, "/"), host: r.Host, accept: r.Header.Get("Accept-Encoding"), start: time.Now()}
	if h.path == SPAManifestName {
		_ = json.NewEncoder(w).Encode(s.m)
		return
	}
	if f := s.special[h.path]; f != nil {
		f(w)
	} else {
		h.bytes = s.serveFile(w, h)
	}
	h.end = time.Now()
	s.mu.Lock()
	s.hits = append(s.hits, h)
	s.mu.Unlock()
}

func (s *spaSite) serveFile(w http.ResponseWriter, h spaHit) int {
	for i, f := range append(s.m.Bundle, s.m.Assets...) {
		if f.Path != h.path {
			continue
		}
		n := int(f.Size)
		if i < len(s.m.Bundle) && strings.Contains(h.accept, "br") {
			n /= 4
			w.Header().Set("Content-Encoding", "br")
		}
		_, _ = w.Write(bytes.Repeat([]byte("x"), n))
		return n
	}
	http.NotFound(w, nil)
	return 0
}

// runSPA runs spa_site with one virtual user for hold against site and returns the
// run and the requests the site saw.
func runSPA(t *testing.T, site *spaSite, client string, hold time.Duration) (RunResult, []spaHit) {
	t.Helper()
	srv := httptest.NewServer(site)
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.A = Endpoint{URL: srv.URL + "/{file}", Host: "spa.test"}
	cfg.Scenarios, cfg.Client, cfg.Timeout = []string{"spa_site"}, client, 500*time.Millisecond
	cfg.Stages = []Stage{{Target: 1}, {Target: 1, Duration: hold}}
	r, err := NewRunner(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(context.Background())
	if err != nil || len(res.Runs) != 1 {
		t.Fatalf("run: %v, %+v", err, res)
	}
	site.mu.Lock()
	defer site.mu.Unlock()
	return res.Runs[0], site.hits
}

func TestSPASiteWalk(t *testing.T) {
	m := testSPA()
	walk := spaWalk(&m)
	if len(walk) != 14 || walk[4] != "img/asset11.jpg" || walk[13] != "img/asset02.jpg" {
		t.Fatalf("walk %q: want the bundle, then the 10 largest assets, largest first", walk)
	}
	for _, client := range []string{"fast", "std"} {
		t.Run(client, func(t *testing.T) {
			rr, hits := runSPA(t, &spaSite{m: m}, client, 2200*time.Millisecond)
			if len(hits) < len(walk)+1 {
				t.Fatalf("%d requests: want more than one visit", len(hits))
			}
			var sent int64
			for i, h := range hits {
				if h.path != walk[i%len(walk)] || h.host != "spa.test" || h.accept != "br, gzip" {
					t.Fatalf("request %d: %+v, want %s with Host spa.test and Accept-Encoding br, gzip", i, h, walk[i%len(walk)])
				}
				if i > 0 && i%len(walk) == 0 && h.start.Sub(hits[i-1].end) < spaPause-10*time.Millisecond {
					t.Errorf("visit %d started %s after the previous one: want a pause of %s", i/len(walk), h.start.Sub(hits[i-1].end), spaPause)
				}
				if i > 0 && i%len(walk) != 0 && h.start.Sub(hits[i-1].end) > spaPause/2 {
					t.Errorf("request %d waited %s within a visit", i, h.start.Sub(hits[i-1].end))
				}
				sent += int64(h.bytes)
			}
			if rr.Requests != int64(len(hits)) || rr.Errors != 0 || rr.Bytes != sent {
				t.Errorf("run counted %d requests, %d errors, %d bytes; the site served %d requests, %d bytes",
					rr.Requests, rr.Errors, rr.Bytes, len(hits), sent)
			}
		})
	}
}

func TestSPASiteErrors(t *testing.T) {
	m := testSPA()
	site := &spaSite{m: m, special: map[string]func(http.ResponseWriter){
		"assets/b-2.css":  func(w http.ResponseWriter) { http.Error(w, "gone", http.StatusNotFound) },
		"img/asset05.jpg": func(w http.ResponseWriter) { http.Error(w, "boom", http.StatusBadGateway) },
		"img/asset09.jpg": func(http.ResponseWriter) { time.Sleep(700 * time.Millisecond) }, // past the 500 ms timeout
		"img/asset03.jpg": func(w http.ResponseWriter) { // a body cut short
			w.Header().Set("Content-Length", "5000")
			_, _ = w.Write([]byte("short"))
			panic(http.ErrAbortHandler)
		},
	}}
	for _, client := range []string{"fast", "std"} {
		t.Run(client, func(t *testing.T) {
			site.hits = nil
			rr, hits := runSPA(t, site, client, 1500*time.Millisecond)
			walk := spaWalk(&m)
			last := false // the timed-out request is recorded late: look for the visit's last
			for _, h := range hits {
				last = last || h.path == walk[len(walk)-1]
			}
			if !last {
				t.Fatalf("%d requests: the visit did not go on after the errors", len(hits))
			}
			k := rr.ErrorsByKind
			if k["status_4xx"] < 1 || k["status_5xx"] < 1 || k["timeout"] < 1 || k["connection"] < 1 ||
				rr.Errors != k["status_4xx"]+k["status_5xx"]+k["timeout"]+k["connection"] {
				t.Errorf("errors %d by kind %v: want 4xx, 5xx, timeout and connection, adding up", rr.Errors, k)
			}
		})
	}
}

func TestSPASiteConfig(t *testing.T) {
	all, err := SelectScenarios([]string{"all"}, true)
	if err != nil || hasKind(all, KindSite) {
		t.Errorf("all: %v (site included: %v); want spa_site only when named", err, hasKind(all, KindSite))
	}
	cfg := DefaultConfig()
	cfg.A.URL, cfg.Scenarios = "http://127.0.0.1:1/{file}", []string{"spa_site"}
	if s := cfg.schedule(spaScenario()); s.Peak() != 3000 || len(s.Stages()) != 7 {
		t.Errorf("default schedule %v: want the reference stages", s.Stages())
	}
	for name, mod := range map[string]func(*Config){
		"rate": func(c *Config) { c.Rate = 10 },
		"id":   func(c *Config) { c.A.URL = "http://127.0.0.1:1/{id}"; c.A.Target = "http://127.0.0.1:1" },
	} {
		c := cfg
		mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "spa_site") {
			t.Errorf("%s: %v, want an error naming spa_site", name, err)
		}
	}
	ep := &endpointRun{Endpoint: Endpoint{Target: "http://h:1/"}}
	if u := ep.siteURL("a/b.js"); u != "http://h:1/a/b.js" {
		t.Errorf("siteURL %s", u)
	}
}
