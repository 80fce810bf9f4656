package tenant

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuPerOp starts counting the process's CPU time (user + system, from
// getrusage: less sensitive to the machine's other load than wall time); the
// function it returns reports it per op as cpu-ns/op.
func cpuPerOp(b *testing.B) func() {
	start := cpuTime(b)
	return func() { b.ReportMetric(float64(cpuTime(b)-start)/float64(b.N), "cpu-ns/op") }
}

// cpuTime returns the process's user + system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLimits allow everything a benchmark can send (1e9/s), so it measures the
// allowing path: a compare-and-swap per bucket.
var benchLimits = Limits{RequestsPerSecond: 1e9, Burst: 1_000_000, UserRequestsPerSecond: 1e9, UserBurst: 1_000_000}

// BenchmarkAllow: one tenant's bucket shared by every goroutine, then 1,000
// tenants' limiters (a goroutine moves over them), each without and with
// per-user buckets (1,000 users per tenant, over the user table's shards).
func BenchmarkAllow(b *testing.B) {
	tenantOnly := Limits{RequestsPerSecond: benchLimits.RequestsPerSecond, Burst: benchLimits.Burst}
	for _, tenants := range []int{1, 1000} {
		for _, withUsers := range []bool{false, true} {
			l := tenantOnly
			if withUsers {
				l = benchLimits
			}
			b.Run(fmt.Sprintf("tenants=%d/users=%v", tenants, withUsers), func(b *testing.B) {
				benchAllow(b, tenants, l, withUsers)
			})
		}
	}
}

// benchAllow runs Allow in parallel over n tenants' limiters of l.
func benchAllow(b *testing.B, n int, l Limits, withUsers bool) {
	limiters := make([]*RateLimiter, n)
	for i := range limiters {
		limiters[i] = NewRateLimiter(l, DefaultUserTableConfig())
	}
	users := make([]string, 1000)
	for i := range users {
		users[i] = fmt.Sprintf("user-%d", i)
	}
	var seq atomic.Int64
	refused := atomic.Int64{}
	b.ReportAllocs()
	defer cpuPerOp(b)()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) * 7919
		for pb.Next() {
			i++
			user := ""
			if withUsers {
				user = users[i%len(users)]
			}
			if !limiters[i%n].Allow(time.Now(), user).OK {
				refused.Add(1)
			}
		}
	})
	b.ReportMetric(float64(refused.Load())/float64(b.N), "refused/op")
}

// BenchmarkBandwidthWait: the reservation of a chunk by every goroutine on one
// tenant's pacer (a rate high enough that nobody sleeps).
func BenchmarkBandwidthWait(b *testing.B) {
	bw := NewBandwidth(1<<50, nil)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := bw.Wait(ctx, 64<<10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
