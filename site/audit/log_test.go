package audit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// testConfig returns a fast-flushing config in dir.
func testConfig(dir string) Config {
	cfg := DefaultConfig()
	cfg.Dir, cfg.FlushEvery = dir, 10*time.Millisecond
	return cfg
}

// open starts a Log on cfg, closed at cleanup.
func open(t testing.TB, cfg Config) *Log {
	t.Helper()
	l, err := New(cfg, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close(context.Background()) })
	return l
}

// closeLog closes l within 5 s.
func closeLog(t testing.TB, l *Log) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// records returns n records one millisecond apart from base, request ids prefix-i.
func records(base time.Time, prefix string, n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = sample(0)
		out[i].Time = base.Add(time.Duration(i) * time.Millisecond)
		out[i].RequestID = fmt.Sprintf("%s-%d", prefix, i)
		out[i].Path = fmt.Sprintf("/p/%d.html", i%10)
		out[i].Status = 200 + i%2
	}
	return out
}

// ids returns the request ids of recs.
func ids(recs []Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.RequestID
	}
	return out
}

func TestWriteCloseQuery(t *testing.T) {
	dir := t.TempDir()
	l := open(t, testConfig(dir))
	base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	in := records(base, "r", 50)
	for i := range in {
		l.Write(&in[i])
	}
	closeLog(t, l)
	if s := l.Stats(); s.Written != 50 || s.Dropped != 0 || s.WriteErrors != 0 || s.Files != 1 || s.BytesOnDisk == 0 {
		t.Fatalf("stats %+v, want 50 written into one file", s)
	}
	got, err := Query(context.Background(), dir, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(got)) != fmt.Sprint(ids(in)) {
		t.Fatalf("query gave %v, want %v", ids(got), ids(in))
	}
	if !got[3].Time.Equal(in[3].Time) || got[3] != (func() Record { r := in[3]; r.Time = got[3].Time; return r })() {
		t.Fatalf("record %+v read back as %+v", in[3], got[3])
	}
}

func TestLogQueryFlushesFirst(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.FlushEvery = time.Minute // only the query's flush writes
	l := open(t, cfg)
	in := records(time.Now(), "q", 3)
	for i := range in {
		l.Write(&in[i])
	}
	waitFor(t, "the queue to empty", func() bool { return len(l.queue) == 0 })
	got, err := l.Query(context.Background(), Filter{})
	if err != nil || len(got) != 3 {
		t.Fatalf("Log.Query = %d records, %v; want the 3 written", len(got), err)
	}
}

// TestWriteNeverBlocks stands a FIFO nobody reads in for audit.log: the writer blocks
// in write(2) once the pipe and its buffer are full. Write must keep returning, and
// the records it cannot queue must be dropped and counted, the queue staying bounded.
func TestWriteNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, currentName)
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	pipe, err := os.OpenFile(fifo, os.O_RDWR, 0) // keeps the pipe open, never reads
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(dir)
	cfg.Buffer = 64
	l := open(t, cfg)
	const n = 200_000 // ~60 MB of JSON: far more than the pipe, bufio and queue hold
	r := sample(0)
	for range n {
		l.Write(&r)
	}
	if q := len(l.queue); q > cfg.Buffer {
		t.Fatalf("queue holds %d records, bound %d", q, cfg.Buffer)
	}
	s := l.Stats()
	if s.Dropped < n-5000 || s.Written != 0 {
		t.Fatalf("stats %+v: want nearly all %d dropped, none written", s, n)
	}
	go io.Copy(io.Discard, pipe) // unstick the writer so Close can drain
	closeLog(t, l)
	pipe.Close()
}

// TestWriteErrorsRecover stands /dev/full in for audit.log: every flush fails with
// ENOSPC. The records are dropped and counted, and once audit.log is a file again
// the writer reopens it and writes.
func TestWriteErrorsRecover(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, currentName)); err != nil {
		t.Fatal(err)
	}
	l := open(t, testConfig(dir))
	in := records(time.Now(), "full", 10)
	for i := range in {
		l.Write(&in[i])
	}
	waitFor(t, "a write error", func() bool { return l.Stats().WriteErrors > 0 })
	if s := l.Stats(); s.Dropped != 10 || s.Written != 0 {
		t.Fatalf("stats %+v, want the 10 records dropped", s)
	}
	os.Remove(filepath.Join(dir, currentName))
	time.Sleep(retryMin + 100*time.Millisecond)
	for i := range in {
		l.Write(&in[i])
	}
	waitFor(t, "records written after the retry", func() bool { return l.Stats().Written == 10 })
	closeLog(t, l)
}

// TestDirectoryRemoved removes the log's directory under the writer: what it then
// writes to the unlinked file is counted as dropped, and the next records land in a
// recreated directory.
func TestDirectoryRemoved(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	l := open(t, testConfig(dir))
	in := records(time.Now(), "rm", 5)
	l.Write(&in[0])
	waitFor(t, "the first record", func() bool { return l.Stats().Written == 1 })
	os.RemoveAll(dir)
	l.Write(&in[1])
	waitFor(t, "a write error", func() bool { return l.Stats().WriteErrors == 1 })
	time.Sleep(retryMin + 100*time.Millisecond)
	for i := 2; i < 5; i++ {
		l.Write(&in[i])
	}
	closeLog(t, l)
	got, err := Query(context.Background(), dir, Filter{})
	if err != nil || fmt.Sprint(ids(got)) != "[rm-2 rm-3 rm-4]" {
		t.Fatalf("after the directory came back: %v, %v; want rm-2..4", ids(got), err)
	}
	if s := l.Stats(); s.Dropped != 1 || s.Written != 4 {
		t.Fatalf("stats %+v, want 1 dropped, 4 written", s)
	}
}

// TestCrashTail leaves a torn last line in audit.log as a crash would: queries skip
// it, and records written after a restart start on a line of their own.
func TestCrashTail(t *testing.T) {
	dir := t.TempDir()
	in := records(time.Now().UTC(), "c", 3)
	full := appendRecord(nil, &in[0])
	torn := appendRecord(nil, &in[1])
	torn = torn[:len(torn)/2]
	if err := os.WriteFile(filepath.Join(dir, currentName), append(full, torn...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Query(context.Background(), dir, Filter{})
	if err != nil || fmt.Sprint(ids(got)) != "[c-0]" {
		t.Fatalf("before restart: %v, %v; want [c-0]", ids(got), err)
	}
	l := open(t, testConfig(dir))
	l.Write(&in[2])
	closeLog(t, l)
	got, err = Query(context.Background(), dir, Filter{})
	if err != nil || fmt.Sprint(ids(got)) != "[c-0 c-2]" {
		t.Fatalf("after restart: %v, %v; want [c-0 c-2]", ids(got), err)
	}
}

func TestWriteAfterClose(t *testing.T) {
	l := open(t, testConfig(t.TempDir()))
	closeLog(t, l)
	r := sample(0)
	l.Write(&r)
	if s := l.Stats(); s.Dropped != 1 {
		t.Fatalf("stats %+v, want the record written after Close dropped", s)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := testConfig("/tmp/x")
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"no dir":       func(c *Config) { c.Dir = "" },
		"small file":   func(c *Config) { c.MaxFileBytes = 100 },
		"small total":  func(c *Config) { c.MaxTotalBytes = c.MaxFileBytes },
		"no buffer":    func(c *Config) { c.Buffer = 0 },
		"no flush":     func(c *Config) { c.FlushEvery = 0 },
		"relative url": func(c *Config) { c.Collector.URL = "/x" },
		"ftp url":      func(c *Config) { c.Collector.URL = "ftp://127.0.0.1/" },
		"zero batch":   func(c *Config) { c.Collector.URL = "http://127.0.0.1/"; c.Collector.Batch = 0 },
	} {
		c := ok
		mut(&c)
		if c.Validate() == nil {
			t.Errorf("%s: Validate accepted it", name)
		}
	}
}
