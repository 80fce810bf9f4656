package audit

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// benchLog starts a log in dir for a benchmark; stuck returns the FIFO's far end
// when audit.log is a FIFO nobody reads (the writer blocks), full makes audit.log
// /dev/full (every flush fails).
func benchLog(b *testing.B, kind string) (*Log, func()) {
	dir := b.TempDir()
	path := filepath.Join(dir, currentName)
	var pipe *os.File
	switch kind {
	case "stuck":
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			b.Skip("no FIFOs:", err)
		}
		var err error
		if pipe, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
			b.Fatal(err)
		}
	case "failing":
		if err := os.Symlink("/dev/full", path); err != nil {
			b.Fatal(err)
		}
	}
	l, err := New(testConfigBench(dir), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	return l, func() {
		if pipe != nil {
			go io.Copy(io.Discard, pipe)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := l.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if pipe != nil {
			pipe.Close()
		}
	}
}

// testConfigBench is the default config (8192 queued, 1 s flush) in dir.
func testConfigBench(dir string) Config {
	cfg := DefaultConfig()
	cfg.Dir = dir
	return cfg
}

// cpuNanos returns the process's user+system CPU time.
func cpuNanos() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// reportWrite adds the process CPU (the writer goroutine's included) and the share
// of records dropped per Write.
func reportWrite(b *testing.B, l *Log, cpu0 int64, dropped0 int64) {
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(l.Stats().Dropped-dropped0)/float64(b.N), "dropped/op")
}

// BenchmarkWrite is the cost of Write to the serving goroutine: "disk" with a
// working disk, the writer keeping up (the loop pauses, timer stopped, whenever 16384
// records are queued, so none is dropped); "disk-behind" the same without pauses (the
// writer falls behind and the queue is full: most records are dropped); "stuck" with
// the writer blocked in write(2) (audit.log a FIFO nobody reads); "failing" with
// every write failing (/dev/full). scripts/bench-audit.sh runs them alternately.
func BenchmarkWrite(b *testing.B) {
	for _, kind := range []string{"disk", "disk-behind", "stuck", "failing"} {
		b.Run(kind, func(b *testing.B) {
			l, stop := benchLog(b, kind)
			defer stop()
			r := sample(0)
			if kind == "stuck" {
				for l.Stats().Dropped == 0 { // fill the pipe, the buffer and the queue
					l.Write(&r)
				}
			}
			b.ReportAllocs()
			cpu0, dropped0 := cpuNanos(), l.Stats().Dropped
			n := 0
			b.ResetTimer()
			for b.Loop() {
				r.Bytes++
				l.Write(&r)
				if n++; kind == "disk" && n%16384 == 0 {
					b.StopTimer()
					waitDrained(l)
					b.StartTimer()
				}
			}
			b.StopTimer()
			reportWrite(b, l, cpu0, dropped0)
		})
	}
}

// waitDrained waits for l's queue to empty.
func waitDrained(l *Log) {
	for len(l.queue) > 0 {
		time.Sleep(100 * time.Microsecond)
	}
}

// BenchmarkWriter is the writer goroutine's throughput to a working disk: b.N
// records queued in bursts the queue holds, then written and fsynced (ns/op is per
// record; 1e9/ns is the request rate above which records start being dropped).
func BenchmarkWriter(b *testing.B) {
	l, stop := benchLog(b, "disk")
	defer stop()
	r := sample(0)
	cpu0 := cpuNanos()
	n := 0
	for b.Loop() {
		l.Write(&r)
		if n++; n%32768 == 0 {
			waitDrained(l)
		}
	}
	if err := l.Flush(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	reportWrite(b, l, cpu0, 0)
	if s := l.Stats(); s.Dropped > 0 {
		b.Fatalf("%d records dropped", s.Dropped)
	}
}

// BenchmarkWriteParallel is BenchmarkWrite from GOMAXPROCS goroutines at once, as
// concurrent requests call it.
func BenchmarkWriteParallel(b *testing.B) {
	for _, kind := range []string{"disk", "stuck", "failing"} {
		b.Run(kind, func(b *testing.B) {
			l, stop := benchLog(b, kind)
			defer stop()
			b.ReportAllocs()
			cpu0, dropped0 := cpuNanos(), l.Stats().Dropped
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				r := sample(0)
				for pb.Next() {
					l.Write(&r)
				}
			})
			b.StopTimer()
			reportWrite(b, l, cpu0, dropped0)
		})
	}
}

// BenchmarkEncode compares the hand-written appender with encoding/json.
func BenchmarkEncode(b *testing.B) {
	r := sample(0)
	r.Path = "/assets/some/longer/path/app.3f2a9c.js"
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = appendRecord(buf[:0], &r)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&r); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkQueue compares queueing records by value (what Write does: the caller's
// record stays on its stack) with queueing pointers to records the caller allocates.
func BenchmarkQueue(b *testing.B) {
	b.Run("value", func(b *testing.B) {
		ch := make(chan Record, 1024)
		b.ReportAllocs()
		for b.Loop() {
			r := sample(0)
			select {
			case ch <- r:
			default:
				<-ch
			}
		}
	})
	b.Run("pointer", func(b *testing.B) {
		ch := make(chan *Record, 1024)
		b.ReportAllocs()
		for b.Loop() {
			r := new(Record)
			*r = sample(0)
			select {
			case ch <- r:
			default:
				<-ch
			}
		}
	})
}
