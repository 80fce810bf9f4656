package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// faultServer answers request number n (from 1) by n mod 5: 1 → 500, 2 → headers
// announcing bodySize bytes, 10 bytes, then a closed connection; else 200 with
// bodySize bytes. It counts what it did.
type faultServer struct {
	seq, ok, failed, cut atomic.Int64
}

const faultBodySize = 3000

func (f *faultServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	body := make([]byte, faultBodySize)
	switch f.seq.Add(1) % 5 {
	case 1:
		f.failed.Add(1)
		http.Error(w, "injected", http.StatusInternalServerError)
	case 2:
		f.cut.Add(1)
		w.Header().Set("Content-Length", strconv.Itoa(faultBodySize))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:10])
		w.(http.Flusher).Flush()
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	default:
		f.ok.Add(1)
		_, _ = w.Write(body)
	}
}

// downloadSpec loads url with the fast client ("fast") or net/http ("std").
func downloadSpec(t *testing.T, client, url string, stages []Stage, rate float64, timeout time.Duration) loadSpec {
	t.Helper()
	spec := loadSpec{sched: NewSchedule(stages), rate: rate, workers: 8, interval: 100 * time.Millisecond,
		graceful: 30 * time.Second}
	if client == "fast" {
		spec.newOp = func(ctx context.Context, _ int) op {
			g, err := newRawGet(ctx, url, credentials{}, timeout)
			if err != nil {
				t.Error(err)
			}
			return g
		}
		return spec
	}
	hc := newClient(newTransport(8), timeout)
	base, err := newDownload(context.Background(), hc, url, credentials{})
	if err != nil {
		t.Fatal(err)
	}
	spec.newOp = func(ctx context.Context, _ int) op { return &download{client: hc, req: base.req.Clone(ctx)} }
	return spec
}

var clients = []string{"fast", "std"}

func TestLoadCountsRequestsBytesAndErrors(t *testing.T) {
	tests := []struct {
		name   string
		stages []Stage
		rate   float64
	}{
		{"closed loop", []Stage{{4, 0}, {4, 300 * time.Millisecond}}, 0},
		{"closed loop ramp up and down", []Stage{{3, 0}, {6, 150 * time.Millisecond}, {0, 150 * time.Millisecond}, {3, 100 * time.Millisecond}}, 0},
		{"open loop", []Stage{{1, 0}, {1, 300 * time.Millisecond}}, 300},
	}
	for _, tc := range tests {
		for _, client := range clients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				fs := &faultServer{}
				srv := httptest.NewServer(fs)
				defer srv.Close()
				g := runLoad(context.Background(), downloadSpec(t, client, srv.URL+"/f", tc.stages, tc.rate, 10*time.Second))
				checkFaultCounts(t, g, fs)
			})
		}
	}
}

// checkFaultCounts compares what the generator counted with what the server did.
func checkFaultCounts(t *testing.T, g *generator, fs *faultServer) {
	t.Helper()
	c, lat, _, status := g.rec.totals()
	served := fs.seq.Load()
	if served == 0 {
		t.Fatal("no request reached the server")
	}
	if got := c.Requests - c.Kinds[kindDropped]; got != served {
		t.Errorf("counted %d requests (without %d dropped), server saw %d", got, c.Kinds[kindDropped], served)
	}
	if c.Kinds[kindOK] != fs.ok.Load() || status[200] != fs.ok.Load()+fs.cut.Load() {
		t.Errorf("ok %d, status 200 %d; server: ok %d cut %d", c.Kinds[kindOK], status[200], fs.ok.Load(), fs.cut.Load())
	}
	if c.Kinds[kind5xx] != fs.failed.Load() || status[500] != fs.failed.Load() {
		t.Errorf("5xx %d (status 500: %d), server failed %d", c.Kinds[kind5xx], status[500], fs.failed.Load())
	}
	if c.Kinds[kindConn] != fs.cut.Load() {
		t.Errorf("connection errors %d, server cut %d", c.Kinds[kindConn], fs.cut.Load())
	}
	if c.Errors != c.Requests-c.Kinds[kindOK] {
		t.Errorf("errors %d of %d requests with %d ok", c.Errors, c.Requests, c.Kinds[kindOK])
	}
	wantBytes := fs.ok.Load()*faultBodySize + fs.cut.Load()*10 + fs.failed.Load()*int64(len("injected\n"))
	if c.Bytes != wantBytes {
		t.Errorf("bytes %d, want %d", c.Bytes, wantBytes)
	}
	if lat.TotalCount() != served {
		t.Errorf("%d latency samples, want one per response (%d)", lat.TotalCount(), served)
	}
	checkSeries(t, g, c)
}

// checkSeries checks that the time series adds up to the totals.
func checkSeries(t *testing.T, g *generator, c counts) {
	t.Helper()
	var reqs, errs, bytes int64
	for _, p := range g.points {
		reqs, errs, bytes = reqs+p.Requests, errs+p.Errors, bytes+p.Bytes
	}
	if reqs != c.Requests || errs != c.Errors || bytes != c.Bytes {
		t.Errorf("series sums %d/%d/%d, totals %d/%d/%d", reqs, errs, bytes, c.Requests, c.Errors, c.Bytes)
	}
	if len(g.points) == 0 {
		t.Error("no time series")
	}
}

func TestLoadConnectionRefusedAndTimeout(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name    string
		url     string
		timeout time.Duration
		kind    errKind
	}{
		{"refused", closedURL, 10 * time.Second, kindConn},
		{"timeout", slow.URL, 50 * time.Millisecond, kindTimeout},
	}
	for _, tc := range tests {
		for _, client := range clients {
			t.Run(tc.name+"/"+client, func(t *testing.T) {
				spec := downloadSpec(t, client, tc.url, []Stage{{2, 0}, {2, 200 * time.Millisecond}}, 0, tc.timeout)
				checkAllFailed(t, runLoad(context.Background(), spec), tc.kind)
			})
		}
	}
}

// checkAllFailed checks that every request failed with kind and left no latency.
func checkAllFailed(t *testing.T, g *generator, kind errKind) {
	t.Helper()
	c, lat, _, _ := g.rec.totals()
	if c.Requests == 0 || c.Kinds[kind] != c.Requests || c.Errors != c.Requests || lat.TotalCount() != 0 {
		t.Errorf("requests %d errors %d kinds %v latency samples %d; want all %s", c.Requests, c.Errors, c.Kinds,
			lat.TotalCount(), kind)
	}
}

func TestLoadStopsOnCancel(t *testing.T) {
	fs := &faultServer{}
	srv := httptest.NewServer(fs)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	done := make(chan *generator)
	go func() {
		done <- runLoad(ctx, downloadSpec(t, "fast", srv.URL, []Stage{{3, 0}, {3, time.Hour}}, 0, 10*time.Second))
	}()
	select {
	case g := <-done:
		if c, _, _, _ := g.rec.totals(); c.Requests == 0 {
			t.Error("nothing counted before the cancel")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("runLoad did not stop after its context was cancelled")
	}
}

func TestFastWorkersCloseTheirConnections(t *testing.T) {
	var open atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	srv.Start()
	defer srv.Close()
	g := runLoad(context.Background(), downloadSpec(t, "fast", srv.URL, []Stage{{5, 0}, {5, 100 * time.Millisecond}, {1, 100 * time.Millisecond}}, 0, 10*time.Second))
	if c, _, _, _ := g.rec.totals(); c.Requests == 0 || c.Errors != 0 {
		t.Fatalf("requests %d errors %d", c.Requests, c.Errors)
	}
	deadline := time.Now().Add(10 * time.Second) // the server notices closes asynchronously
	for open.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("%d connections still open after the run", n)
	}
}
