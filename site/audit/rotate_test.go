package audit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// writeAll writes recs to a fresh log with 4 KiB files and total bound total, and
// closes it.
func writeAll(t *testing.T, dir string, total int64, recs []Record) *Log {
	t.Helper()
	cfg := testConfig(dir)
	cfg.MaxFileBytes, cfg.MaxTotalBytes = 4096, total
	l := open(t, cfg)
	for i := range recs {
		l.Write(&recs[i])
	}
	closeLog(t, l)
	return l
}

// dirBytes returns the bytes and count of the log files in dir.
func dirBytes(t *testing.T, dir string) (total int64, files int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := parseRotated(e.Name()); ok || e.Name() == currentName {
			info, _ := e.Info()
			total, files = total+info.Size(), files+1
		}
	}
	return total, files
}

func TestRotationKeepsTotalBound(t *testing.T) {
	dir := t.TempDir()
	in := records(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC), "rot", 2000) // ~600 KB
	l := writeAll(t, dir, 16<<10, in)
	total, files := dirBytes(t, dir)
	if total > 16<<10 || files < 3 || files > 5 {
		t.Fatalf("%d bytes in %d files, want at most 16 KiB in 3 to 5 files", total, files)
	}
	if s := l.Stats(); s.BytesOnDisk != total || s.Files != int64(files) || s.Written != 2000 {
		t.Fatalf("stats %+v, disk holds %d bytes in %d files", s, total, files)
	}
	got, err := Query(context.Background(), dir, Filter{Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	want := ids(in[len(in)-len(got):])
	if len(got) < 20 || !slices.Equal(ids(got), want) {
		t.Fatalf("kept %d records %v..., want the newest ones in order", len(got), ids(got)[:3])
	}
	segs, _ := listRotated(dir)
	for i, s := range segs {
		first := in[slices.Index(ids(in), firstID(t, dir, s.name))].Time
		if !s.first.Equal(first) || i > 0 && s.seq != segs[i-1].seq+1 {
			t.Fatalf("file %s: named for %v, first record at %v", s.name, s.first, first)
		}
	}
}

// firstID returns the request id of the first record of the file name in dir.
func firstID(t *testing.T, dir, name string) string {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, _ := f.Read(b)
	line := b[:slices.Index(b[:n], '\n')+1]
	return roundTrip(t, line).RequestID
}

func TestRestartContinuesSequence(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	writeAll(t, dir, 1<<20, records(base, "a", 100))
	before, _ := listRotated(dir)
	writeAll(t, dir, 1<<20, records(base.Add(time.Minute), "b", 100))
	after, _ := listRotated(dir)
	if len(before) == 0 || len(after) <= len(before) || after[len(before)].seq != before[len(before)-1].seq+1 {
		t.Fatalf("rotated before restart %d, after %d: sequence not continued", len(before), len(after))
	}
	got, err := Query(context.Background(), dir, Filter{Limit: MaxLimit})
	if err != nil || len(got) != 200 || got[0].RequestID != "a-0" || got[199].RequestID != "b-99" {
		t.Fatalf("query after restart: %d records, %v", len(got), err)
	}
}

// perSecond returns n records one second apart from base.
func perSecond(base time.Time, prefix string, n int) []Record {
	in := records(base, prefix, n)
	for i := range in {
		in[i].Time = base.Add(time.Duration(i) * time.Second)
	}
	return in
}

func TestQueryFilters(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	in := perSecond(base, "q", 300)
	for i := range in {
		if i%3 == 0 {
			in[i].Tenant, in[i].Host, in[i].Cache = "other", "WWW.other.test", "MISS"
		}
	}
	writeAll(t, dir, 1<<20, in)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	pick := func(keep func(i int) bool) []string {
		var out []string
		for i := range in {
			if keep(i) {
				out = append(out, in[i].RequestID)
			}
		}
		return out
	}
	tests := []struct {
		name string
		f    Filter
		want []string
	}{
		{"time range across files", Filter{Since: at(100), Until: at(200)}, pick(func(i int) bool { return i >= 100 && i < 200 })},
		{"limit keeps the newest", Filter{Until: at(200), Limit: 10}, pick(func(i int) bool { return i >= 190 && i < 200 })},
		{"default limit", Filter{}, pick(func(int) bool { return true })},
		{"tenant", Filter{Tenant: "other", Limit: 5}, pick(func(i int) bool { return i%3 == 0 && i >= 285 })},
		{"host any case", Filter{Host: "www.OTHER.test", Since: at(290)}, pick(func(i int) bool { return i%3 == 0 && i >= 290 })},
		{"cache", Filter{Cache: "miss", Since: at(290)}, pick(func(i int) bool { return i%3 == 0 && i >= 290 })},
		{"status and path", Filter{Status: 201, Path: "/p/*3.*"}, pick(func(i int) bool { return i%2 == 1 && i%10 == 3 })},
		{"path glob", Filter{Path: "/**/7.html", Since: at(250)}, pick(func(i int) bool { return i%10 == 7 && i >= 250 })},
		{"nothing", Filter{Since: at(1000)}, nil},
	}
	for _, tt := range tests {
		got, err := Query(context.Background(), dir, tt.f)
		if err != nil || !slices.Equal(ids(got), tt.want) {
			t.Errorf("%s: %v, %v\nwant %v", tt.name, ids(got), err, tt.want)
		}
	}
	if segs, _ := listRotated(dir); len(segs) < 10 {
		t.Fatalf("only %d rotated files: the time ranges did not cross files", len(segs))
	}
}

// TestQuerySkipsFilesByName plants an in-range record in a file whose name says it
// begins after Until: the query must not open that file.
func TestQuerySkipsFilesByName(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	in := perSecond(base, "s", 300)
	writeAll(t, dir, 1<<20, in)
	segs, _ := listRotated(dir)
	last := segs[len(segs)-1]
	planted := in[5]
	planted.RequestID = "planted"
	f, _ := os.OpenFile(filepath.Join(dir, last.name), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(appendRecord(nil, &planted))
	f.Close()
	until := base.Add(10 * time.Second)
	if got, _ := Query(context.Background(), dir, Filter{Until: until}); slices.Contains(ids(got), "planted") {
		t.Fatalf("the file %s (beginning after Until) was read", last.name)
	}
	if got, _ := Query(context.Background(), dir, Filter{}); !slices.Contains(ids(got), "planted") {
		t.Fatal("the planted record is not found without a time range")
	}
}

func TestQueryInvalid(t *testing.T) {
	now := time.Now()
	for _, f := range []Filter{{Path: "nope"}, {Limit: -1}, {Limit: MaxLimit + 1}, {Status: 1000},
		{Since: now, Until: now.Add(-time.Second)}} {
		if _, err := Query(context.Background(), t.TempDir(), f); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Query(%+v) = %v, want EINVALID", f, err)
		}
	}
	if got, err := Query(context.Background(), filepath.Join(t.TempDir(), "none"), Filter{}); err != nil || got != nil {
		t.Fatalf("missing dir: %v, %v", got, err)
	}
}
