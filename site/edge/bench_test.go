package edge

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/coffer/coffer/site"
)

// cpuTime is the process's user+system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportCPU adds the CPU time per operation (less sensitive to a loaded
// machine than wall time).
func reportCPU(b *testing.B, start int64) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// BenchmarkHit is a hot hit: Get (a fresh entry opened as an *os.File) and
// Close. Compare BenchmarkOpenBaseline, the os.Open+Close it cannot avoid.
func BenchmarkHit(b *testing.B) {
	u := newUpstream(b, fixed(strings.Repeat("h", 16<<10), nil))
	c := newCache(b, testConfig(b.TempDir(), nil))
	req := request(u.origin(b, 0), "/hot.js")
	ctx := context.Background()
	obj, err := c.Get(ctx, req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, obj.Content)
	obj.Close()
	b.ReportAllocs()
	start := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		obj, err := c.Get(ctx, req)
		if err != nil || obj.Cache != site.CacheHit {
			b.Fatal(err)
		}
		obj.Close()
	}
	reportCPU(b, start)
}

// BenchmarkOpenBaseline opens and closes a 16 KiB file: the floor of a hit.
func BenchmarkOpenBaseline(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	os.WriteFile(path, []byte(strings.Repeat("h", 16<<10)), 0o600)
	b.ReportAllocs()
	start := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
	reportCPU(b, start)
}

// BenchmarkCoalescedMiss500 is 500 concurrent misses on a new key per
// operation, each reading the 64 KiB body: one upstream request per op.
func BenchmarkCoalescedMiss500(b *testing.B) {
	body := strings.Repeat("m", 64<<10)
	u := newUpstream(b, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })
	c := newCache(b, testConfig(b.TempDir(), nil))
	o := u.origin(b, 0)
	b.ReportAllocs()
	start := cpuTime()
	i := 0
	for b.Loop() {
		req := request(o, fmt.Sprint("/m", i))
		i++
		var wg sync.WaitGroup
		for range 500 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				obj, err := c.Get(context.Background(), req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, obj.Content)
				obj.Close()
			}()
		}
		wg.Wait()
	}
	reportCPU(b, start)
	b.ReportMetric(float64(u.n.Load())/float64(b.N), "upstream-req/op")
}
