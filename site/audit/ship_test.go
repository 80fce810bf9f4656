package audit

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// collector is an HTTP collector on 127.0.0.1 that can fail on demand and counts
// the records it acknowledged by request id.
type collector struct {
	*httptest.Server
	failing  atomic.Bool
	failures atomic.Int64
	lose     atomic.Int64 // answers to lose: the records are taken, the answer is a 502
	mu       sync.Mutex
	got      map[string]int
	bad      []string // protocol faults seen
}

func newCollector(t *testing.T) *collector {
	c := &collector{got: map[string]int{}}
	c.Server = httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.Close)
	return c
}

func (c *collector) serve(w http.ResponseWriter, r *http.Request) {
	if c.failing.Load() {
		c.failures.Add(1)
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-ndjson" ||
		r.Header.Get("Authorization") != "Bearer t" {
		c.bad = append(c.bad, r.Method+" "+r.Header.Get("Content-Type"))
	}
	sc := bufio.NewScanner(r.Body)
	for sc.Scan() {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			c.bad = append(c.bad, "line "+sc.Text())
			continue
		}
		c.got[rec.RequestID]++
	}
	if c.lose.Add(-1) >= 0 {
		w.WriteHeader(http.StatusBadGateway) // as a proxy whose upstream took the batch and then failed
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// counts returns distinct records received and all receptions.
func (c *collector) counts() (distinct, total int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range c.got {
		total += n
	}
	return len(c.got), total
}

// shipLog starts a log in dir shipping to c, with 4 KiB files bounded by total.
func shipLog(t *testing.T, dir string, c *collector, total int64) *Log {
	cfg := testConfig(dir)
	cfg.MaxFileBytes, cfg.MaxTotalBytes = 4096, total
	cfg.Collector = CollectorConfig{URL: c.URL, Batch: 50, MaxBatchBytes: 8 << 10, FlushEvery: 10 * time.Millisecond,
		Timeout: 2 * time.Second, Headers: map[string]string{"Authorization": "Bearer t"}}
	l, err := New(cfg, c.Client(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeLog(t, l) })
	return l
}

// writeRecs writes recs to l.
func writeRecs(l *Log, recs []Record) {
	for i := range recs {
		l.Write(&recs[i])
	}
}

// TestShipThroughOutageAndRestart: the collector fails while 300 records are written
// across rotations, the log restarts, 200 more are written, the collector recovers:
// every record arrives (at least once: a batch is resent when its 2xx answer is
// lost). A clean restart after that resends nothing: the cursor was saved.
func TestShipThroughOutageAndRestart(t *testing.T) {
	dir := t.TempDir()
	c := newCollector(t)
	c.failing.Store(true)
	base := time.Now().UTC()
	l := shipLog(t, dir, c, 1<<20)
	writeRecs(l, records(base, "a", 300))
	waitFor(t, "failed POSTs", func() bool { return l.Stats().ShipFailures >= 3 })
	closeLog(t, l)

	l = shipLog(t, dir, c, 1<<20)
	writeRecs(l, records(base.Add(time.Second), "b", 200))
	c.failing.Store(false)
	waitFor(t, "all 500 records", func() bool { d, _ := c.counts(); return d == 500 })
	if segs, _ := listRotated(dir); len(segs) < 10 {
		t.Fatalf("%d rotated files: shipping did not cross rotations", len(segs))
	}
	waitFor(t, "the cursor to reach the end", func() bool { return l.Stats().Shipped >= 500 })
	_, before := c.counts()
	closeLog(t, l)

	l = shipLog(t, dir, c, 1<<20)
	writeRecs(l, records(base.Add(2*time.Second), "c", 10))
	waitFor(t, "the 10 new records", func() bool { d, _ := c.counts(); return d == 510 })
	time.Sleep(50 * time.Millisecond)
	if _, total := c.counts(); total != before+10 {
		t.Fatalf("after a clean restart the collector got %d records, want only the 10 new", total-before)
	}
	if len(c.bad) > 0 || before != 500 {
		t.Fatalf("faults %v; %d receptions of 500 records", c.bad, before)
	}
}

// TestShipSkipsDeletedFiles: during an outage the total bound deletes files not yet
// shipped; after it, exactly what is still on disk arrives, and shipping goes on.
func TestShipSkipsDeletedFiles(t *testing.T) {
	dir := t.TempDir()
	c := newCollector(t)
	c.failing.Store(true)
	l := shipLog(t, dir, c, 16<<10)
	writeRecs(l, records(time.Now().UTC(), "d", 1000))
	waitFor(t, "all written", func() bool { return l.Stats().Written == 1000 })
	waitFor(t, "a failed POST", func() bool { return l.Stats().ShipFailures >= 1 })
	kept, err := l.Query(t.Context(), Filter{Limit: MaxLimit})
	if err != nil || len(kept) == 0 || len(kept) > 100 {
		t.Fatalf("query: %d records, %v", len(kept), err)
	}
	c.failing.Store(false)
	waitFor(t, "the kept records", func() bool { d, _ := c.counts(); return d >= len(kept) })
	for _, r := range kept {
		if c.got[r.RequestID] == 0 {
			t.Fatalf("kept record %s was not shipped", r.RequestID)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, cursorName)); err != nil {
		t.Fatal(err)
	}
}

// TestShipAtLeastOnce: a collector that takes a batch but whose answer is lost gets
// it again; nothing is lost, and request_id tells the copies apart.
func TestShipAtLeastOnce(t *testing.T) {
	c := newCollector(t)
	c.lose.Store(1)
	l := shipLog(t, t.TempDir(), c, 1<<20)
	writeRecs(l, records(time.Now().UTC(), "once", 20))
	waitFor(t, "the 20 records", func() bool { d, _ := c.counts(); return d == 20 })
	waitFor(t, "the acknowledgement", func() bool { return l.Stats().Shipped >= 20 })
	if d, total := c.counts(); total <= d || l.Stats().ShipFailures != 1 {
		t.Fatalf("%d receptions of %d records, %d failures: the batch whose answer was lost was not resent",
			total, d, l.Stats().ShipFailures)
	}
}
