//go:build !novips

package vips

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
)

// benchSourcePath caches the benchmark source between runs: making it takes seconds.
var benchSourcePath = filepath.Join(os.TempDir(), "coffer-bench-4000x3000-q95-v2.jpg")

// benchSource returns a deterministic 4000×3000 noisy-gradient JPEG at quality 95
// (about 5 MB), made once and cached under os.TempDir().
func benchSource(b *testing.B) []byte {
	b.Helper()
	if data, err := os.ReadFile(benchSourcePath); err == nil && len(data) > 0 {
		return data
	}
	data := encodeJPEG(gradient(4000, 3000, false, 42), 95)
	tmp := benchSourcePath + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, benchSourcePath); err != nil {
		b.Fatal(err)
	}
	return data
}

// cpuTime returns the user+system CPU time of this process (who = RUSAGE_SELF) or of
// its waited-for children (RUSAGE_CHILDREN).
func cpuTime(tb testing.TB, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkTransform800Blur2 measures the CPU coffer spends to turn the 5 MB JPEG
// into an 800 px wide, σ2-blurred JPEG or WebP (quality 80, metadata stripped).
// Compare with BenchmarkVipsCLI800Blur2 through scripts/bench-vips.sh.
func BenchmarkTransform800Blur2(b *testing.B) {
	src := benchSource(b)
	cfg := imaging.DefaultConfig()
	cfg.Workers = 1
	e := newEngine(b, cfg)
	for _, f := range []imaging.Format{imaging.JPEG, imaging.WebP} {
		b.Run(string(f), func(b *testing.B) {
			o := imaging.Options{Width: 800, Blur: 2, Format: f}
			b.SetBytes(int64(len(src)))
			start := cpuTime(b, syscall.RUSAGE_SELF)
			b.ResetTimer()
			for range b.N {
				res, err := e.Transform(context.Background(), bytes.NewReader(src), o)
				if err != nil {
					b.Fatal(err)
				}
				if res.Width != 800 || res.Height != 600 {
					b.Fatalf("output %dx%d", res.Width, res.Height)
				}
			}
			b.StopTimer()
			reportCPU(b, cpuTime(b, syscall.RUSAGE_SELF)-start)
		})
	}
}

// BenchmarkVipsCLI800Blur2 measures libvips' own command-line tool on the same work,
// in the closest pipeline it offers: "vips thumbnail src t.v 800" (shrink-on-load,
// autorotate, to the uncompressed vips format) then "vips gaussblur t.v out[Q=80,strip]
// 2", with VIPS_CONCURRENCY=1 like coffer. CPU comes from RUSAGE_CHILDREN, so
// cpu-ms/op includes two process start-ups (~80-100 ms each: libvips loads its
// modules). Each iteration also runs the same two commands on a 16×16 JPEG kept at
// 16 px, right after, and reports their CPU as startup-ms/op and the difference as net-cpu-ms/op:
// the work itself, the figure to compare coffer's cpu-ms/op with.
func BenchmarkVipsCLI800Blur2(b *testing.B) {
	vips, err := exec.LookPath("vips")
	if err != nil {
		b.Skip("vips command not installed (Debian: libvips-tools)")
	}
	dir := b.TempDir()
	big, tiny := filepath.Join(dir, "src.jpg"), filepath.Join(dir, "tiny.jpg")
	if err := os.WriteFile(big, benchSource(b), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(tiny, encodeJPEG(gradient(16, 16, false, 1), 95), 0o644); err != nil {
		b.Fatal(err)
	}
	thumb := filepath.Join(dir, "t.v")
	pair := func(src, size, out string) {
		runVips(b, vips, "thumbnail", src, thumb, size)
		runVips(b, vips, "gaussblur", thumb, out+"[Q=80,strip]", "2")
	}
	for _, ext := range []string{"jpeg", "webp"} {
		b.Run(ext, func(b *testing.B) {
			out := filepath.Join(dir, "out."+ext)
			var work, startup time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := cpuTime(b, syscall.RUSAGE_CHILDREN)
				pair(big, "800", out)
				t1 := cpuTime(b, syscall.RUSAGE_CHILDREN)
				pair(tiny, "16", out) // no enlargement: start-up and a trivial image
				startup += cpuTime(b, syscall.RUSAGE_CHILDREN) - t1
				work += t1 - t0
			}
			b.StopTimer()
			reportCPU(b, work)
			b.ReportMetric(float64(startup.Microseconds())/1000/float64(b.N), "startup-ms/op")
			b.ReportMetric(float64((work-startup).Microseconds())/1000/float64(b.N), "net-cpu-ms/op")
		})
	}
}

func runVips(b *testing.B, vips string, args ...string) {
	cmd := exec.Command(vips, args...)
	cmd.Env = append(os.Environ(), "VIPS_CONCURRENCY=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("vips %v: %v\n%s", args, err, out)
	}
}
