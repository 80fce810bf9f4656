package rpcapi_test

import (
	"io"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// BenchmarkGetBucket reads the default bucket's settings as the admin, client and
// server in this process on loopback: over /v1 (GET /v1/buckets/default, JSON) and
// over the management API with the Connect protocol (binary and JSON, HTTP/1.1) and
// gRPC (h2c). It reports the process's CPU per call (client and server together,
// from getrusage), which a loaded machine disturbs less than the time per call.
// Compare two with scripts/bench-ab.sh ./rpcapi 'GetBucket/v1-json$' 'GetBucket/grpc$'.
func BenchmarkGetBucket(b *testing.B) {
	e := newEnv(b)
	b.Run("v1-json", func(b *testing.B) {
		hc := asAdmin()
		benchCPU(b, func() error {
			resp, err := hc.Get(e.base + "/v1/buckets/default")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			return err
		})
	})
	for name, c := range map[string]adminv1connect.BucketServiceClient{
		"connect-proto": adminv1connect.NewBucketServiceClient(asAdmin(), e.base),
		"connect-json":  adminv1connect.NewBucketServiceClient(asAdmin(), e.base, connect.WithProtoJSON()),
		"grpc":          adminv1connect.NewBucketServiceClient(h2cClient("X-Hasura-Admin-Secret", adminSecret), e.base, connect.WithGRPC()),
	} {
		b.Run(name, func(b *testing.B) {
			benchCPU(b, func() error {
				_, err := c.GetBucket(ctx(), req(&adminv1.GetBucketRequest{Id: "default"}))
				return err
			})
		})
	}
}

// benchCPU runs call b.N times and reports the process's CPU microseconds per call.
func benchCPU(b *testing.B, call func() error) {
	b.Helper()
	var before, after syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for range b.N {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}
