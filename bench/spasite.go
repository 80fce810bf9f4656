package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// KindSite is a scenario that walks a static site like a browser: each worker is a
// virtual user loading the pages' files in sequence and pausing between visits.
const KindSite Kind = "site"

// SPASiteStages is the reference schedule of the spa_site scenario (virtual users).
const SPASiteStages = "10@1m,0@1m,40@3m,40@1m,0@1m,3000@1m,0@1m"

// The spa_site walk: the bundle in order, then the spaAssetsWalked largest assets, then
// a pause of spaPause. spaSeed is the seed of the fixture --fixtures-dir writes.
const (
	spaAssetsWalked = 10
	spaPause        = time.Second
	spaSeed         = 1
	spaAccept       = "br, gzip"
)

// spaScenario is the spa_site scenario, with the reference stages as its default
// schedule.
func spaScenario() Scenario {
	st, _ := ParseStages(SPASiteStages) // a valid constant
	return Scenario{Name: "spa_site", Kind: KindSite, Stages: st, Workers: 3000}
}

// spaWalk returns the paths one visit of the site loads, in order.
func spaWalk(m *SPAManifest) []string {
	var paths []string
	for _, f := range m.Bundle {
		paths = append(paths, f.Path)
	}
	for _, f := range m.Largest(spaAssetsWalked) {
		paths = append(paths, f.Path)
	}
	return paths
}

// siteURL is the URL of path on ep's site: the --url template with {file} replaced,
// or path appended to --url (or --target) after a slash.
func (ep *endpointRun) siteURL(path string) string {
	base := ep.URL
	if base == "" {
		base = ep.Target
	}
	if strings.Contains(base, "{file}") {
		return strings.ReplaceAll(base, "{file}", path)
	}
	return strings.TrimRight(base, "/") + "/" + path
}

// loadManifest reads the SPA manifest from the fixtures directory, or else GETs it
// from the site.
func (ep *endpointRun) loadManifest(ctx context.Context) error {
	if ep.cfg.FixturesDir != "" {
		f, err := os.Open(filepath.Join(ep.cfg.FixturesDir, SPAManifestName))
		if err != nil {
			return err
		}
		defer f.Close()
		m, err := ReadSPAManifest(f)
		ep.site = &m
		return err
	}
	u := ep.siteURL(SPAManifestName)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Host = ep.Host
	resp, err := ep.client.Do(req)
	if err != nil {
		return fmt.Errorf("spa manifest: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("spa manifest: GET %s: %s", u, resp.Status)
	}
	m, err := ReadSPAManifest(resp.Body)
	ep.site = &m
	return err
}

// siteFactory is opFactory for a site scenario: a virtual user per worker, over the
// fast client for plain http, else net/http with the endpoint's shared transport.
func (ep *endpointRun) siteFactory() (func(ctx context.Context, id int) op, string, error) {
	paths := spaWalk(ep.site)
	first := ep.siteURL(paths[0])
	if ep.cfg.Client == "fast" && strings.HasPrefix(first, "http://") {
		var addr string
		reqs := make([][]byte, len(paths)) // shared by the workers, read only
		for i, p := range paths {
			var err error
			addr, reqs[i], err = rawRequest(ep.siteURL(p), ep.Host, [][2]string{{"Accept-Encoding", spaAccept}})
			if err != nil {
				return nil, "", fmt.Errorf("spa_site: %w", err)
			}
		}
		return func(ctx context.Context, _ int) op {
			g := &rawGet{rawConn: rawConn{addr: addr, timeout: ep.cfg.Timeout, ctx: ctx}}
			return &visitor{steps: len(reqs), pause: spaPause, get: func(i int, w *workerState, start time.Time) outcome {
				g.req = reqs[i]
				return g.do(ctx, w, start)
			}, release: g.close}
		}, first, nil
	}
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = ep.siteURL(p)
	}
	hdr := http.Header{"Accept-Encoding": {spaAccept}} // shared, never written
	return func(ctx context.Context, _ int) op {
		return &visitor{steps: len(urls), pause: spaPause, get: func(i int, w *workerState, start time.Time) outcome {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, urls[i], nil)
			if err != nil {
				return outcome{kind: kindOther, latency: time.Since(start)}
			}
			req.Header, req.Host = hdr, ep.Host
			return (&download{client: ep.client, req: req}).do(ctx, w, start)
		}}
	}, first, nil
}

// discardBufs are the body buffers of virtual users: taken for one request and given
// back, so that thousands of users pausing between visits hold none.
var discardBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// visitor is one virtual user: it makes requests 0..steps-1 in turn and then asks its
// worker for a pause (see pacer) before starting over.
type visitor struct {
	steps   int
	next    int
	pause   time.Duration
	get     func(i int, w *workerState, start time.Time) outcome
	release func() // closes a connection of its own; nil for none
}

// do makes the next request of the visit, with a pooled body buffer.
func (v *visitor) do(_ context.Context, w *workerState, start time.Time) outcome {
	if v.next == v.steps {
		v.next = 0
	}
	bp := discardBufs.Get().(*[]byte)
	w.buf = *bp
	o := v.get(v.next, w, start)
	w.buf = nil
	discardBufs.Put(bp)
	v.next++
	return o
}

// wait returns the pause due before the next request: the visitor's pause after the
// last request of a visit (once: the visit then starts over), else 0.
func (v *visitor) wait() time.Duration {
	if v.next < v.steps {
		return 0
	}
	v.next = 0
	return v.pause
}

func (v *visitor) close() {
	if v.release != nil {
		v.release()
	}
}

// hasKind reports whether one of scs is of kind k.
func hasKind(scs []Scenario, k Kind) bool {
	for _, s := range scs {
		if s.Kind == k {
			return true
		}
	}
	return false
}

// validateSite checks the settings of a run with a site scenario among scs.
func (c *Config) validateSite(scs []Scenario) error {
	if !hasKind(scs, KindSite) {
		return nil
	}
	var errs []error
	if c.Rate > 0 {
		errs = append(errs, fmt.Errorf("--rate: spa_site is a closed loop of virtual users (each pauses %s between visits)", spaPause))
	}
	for _, u := range []string{c.A.URL, c.B.URL} {
		if strings.Contains(u, "{id}") {
			errs = append(errs, fmt.Errorf("--url %q: spa_site knows files by path ({file}), not by id", u))
		}
	}
	return errors.Join(errs...)
}
