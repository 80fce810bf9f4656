package metatest

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// BenchUploadWrites runs what an upload writes to the metadata (BeginUpload, then
// CreateFiles of one file into bucket "default") b.N times from 50 goroutines on s, a
// migrated store, and reports the process's CPU time per upload (cpu-µs/op) besides
// the wall time per upload (ns/op: divide 1e9 by it for uploads per second).
func BenchUploadWrites(b *testing.B, s meta.Store) {
	ctx := context.Background()
	var next atomic.Int64
	prefix := fmt.Sprintf("%08x", time.Now().UnixNano()&0xffffffff)
	b.SetParallelism(max(1, 50/runtime.GOMAXPROCS(0))) // 50 goroutines
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := next.Add(1)
			key := fmt.Sprintf("f/%s/%d", prefix, n)
			f := &coffer.File{ID: fmt.Sprintf("%s-0000-4000-8000-%012d", prefix, n), BucketID: "default",
				Name: "a", Size: 1, MimeType: "text/plain", ETag: `"x"`, IsUploaded: true, BlobKey: key}
			if err := s.BeginUpload(ctx, key, nil); err != nil {
				b.Error(err)
				return
			}
			if err := s.CreateFiles(ctx, []*coffer.File{f}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// cpuTime returns the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchUploadWritesTenant runs BenchUploadWrites on the view of a new tenant of s, with
// quota (coffer.Quota{} for none) and the default bucket a new tenant has.
func BenchUploadWritesTenant(b *testing.B, s Shared, quota coffer.Quota) {
	t := &coffer.Tenant{ID: "bench", Quota: quota}
	if err := s.CreateTenant(context.Background(), t); err != nil {
		b.Fatal(err)
	}
	BenchUploadWrites(b, s.ForTenant(t.ID))
}
