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

// FillFolders stores folders*perFolder uploaded files in bucket "default" of s, a
// migrated store, perFolder in each folder "dNNN/" ("d000/f000.txt"...), a folder
// per transaction as uploads store them (an intent per file, then CreateFiles).
func FillFolders(ctx context.Context, s meta.Store, folders, perFolder int) error {
	for d := range folders {
		files := make([]*coffer.File, perFolder)
		for i := range files {
			f := &coffer.File{ID: coffer.NewFileID(), BucketID: coffer.DefaultBucketID, Name: fmt.Sprintf("d%03d/f%03d.txt", d, i),
				Size: 1, MimeType: "text/plain", ETag: `"x"`, IsUploaded: true, BlobKey: fmt.Sprintf("f/%d/%d", d, i)}
			if err := s.BeginUpload(ctx, f.BlobKey, nil); err != nil {
				return err
			}
			files[i] = f
		}
		if err := s.CreateFiles(ctx, files); err != nil {
			return err
		}
	}
	return nil
}

// BenchListPage lists a page of 100 entries with delimiter "/" from s, a migrated
// store, after storing 100,000 files in 1,000 folders of 100 (FillFolders): the
// bucket's top level ("folders": 100 prefixes, a seek past each) and one folder
// ("files": 100 files).
func BenchListPage(b *testing.B, s meta.Store) {
	start := time.Now()
	if err := FillFolders(b.Context(), s, 1000, 100); err != nil {
		b.Fatal(err)
	}
	b.Logf("100,000 files stored in %v", time.Since(start).Round(time.Millisecond))
	for _, bc := range []struct{ name, prefix string }{{"folders", ""}, {"files", "d500/"}} {
		b.Run(bc.name, func(b *testing.B) {
			opt := coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: bc.prefix, Delimiter: "/", Limit: 100}
			for b.Loop() {
				p, err := s.ListFiles(b.Context(), opt)
				if err != nil || len(p.Files)+len(p.Prefixes) != 100 {
					b.Fatalf("ListFiles: %d files, %d prefixes, %v", len(p.Files), len(p.Prefixes), err)
				}
			}
		})
	}
}
