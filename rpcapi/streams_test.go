package rpcapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/internal/streamtest"
)

// reflectionPath is the reflection method bomb streams are sent to.
const reflectionPath = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"

// cpuSeconds is the CPU time this process has used: the server runs in it, and the
// client's part is small.
func cpuSeconds(t testing.TB) float64 {
	s, err := streamtest.CPU("self")
	if err != nil {
		t.Skip(err)
	}
	return s
}

// h2c returns a client of its own HTTP/2 connection, closed when t ends.
func h2c(t testing.TB) *http.Client {
	hc, done := streamtest.H2C()
	t.Cleanup(done)
	return hc
}

// TestStreamBudget: an anonymous reflection stream of gzip bombs (each message
// inflates to 2 MiB, or to 16 KiB, the largest a reflection request may be), or of
// many small messages, is cut with RESOURCE_EXHAUSTED once it is over the stream's
// budget, over gRPC and Connect streaming alike, having cost the server little CPU.
func TestStreamBudget(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		name    string
		size, n int
		connect bool
	}{
		{"grpc, 2 MiB messages", 2<<20 - 64, 64, false},
		{"connect, 2 MiB messages", 2<<20 - 64, 64, true},
		{"grpc, 16 KiB messages", 16<<10 - 64, 4096, false},
		{"connect, 16 KiB messages", 16<<10 - 64, 4096, true},
		{"grpc, small messages", 64, 4096, false}, // the message count
	} {
		frame := streamtest.BombFrame(tc.size)
		cpu := cpuSeconds(t)
		start := time.Now()
		res := streamtest.Send(h2c(t), e.base+reflectionPath, frame, tc.n, tc.connect)
		used := cpuSeconds(t) - cpu
		t.Logf("%s: %v, %.2f s of CPU in %v", tc.name, res, used, time.Since(start).Round(time.Millisecond))
		if !res.ResourceExhausted() || res.Answers >= tc.n {
			t.Errorf("%s: %v to %d messages: want the stream cut with RESOURCE_EXHAUSTED", tc.name, res, tc.n)
		}
		if used > 0.5 {
			t.Errorf("%s: the stream cost %.2f s of CPU", tc.name, used)
		}
	}
}

// TestConnBudget: an anonymous caller that keeps opening bomb streams on one HTTP/2
// connection, or keeps making unary calls of 2 MiB gzip bombs, is refused with
// RESOURCE_EXHAUSTED once it has had 32 MiB decoded, before its next call is
// decoded; another connection, and another caller on the same one (a proxy's
// connection carries many), are served meanwhile.
func TestConnBudget(t *testing.T) {
	e := newEnv(t)
	const getVersion = "/coffer.admin.v1.ServerService/GetVersion"
	for _, tc := range []struct {
		name, path string
		frame      []byte
		n          int
	}{
		{"reflection streams", reflectionPath, streamtest.BombFrame(16<<10 - 64), 4096},
		{"unary calls", getVersion, streamtest.BombFrame(2<<20 - 64), 1},
		// Calls refused after their bombs were decoded: by the count of a unary
		// call's messages, or because the bomb is not a message (field 0).
		{"unary calls of two messages", getVersion, streamtest.BombFrame(2<<20 - 64), 2},
		{"unary calls of no message", getVersion, streamtest.Frame(make([]byte, 2<<20-64)), 1},
	} {
		frame, c := tc.frame, h2c(t)
		cpu := cpuSeconds(t)
		calls := 0
		for ; calls < 200; calls++ {
			res := streamtest.Send(c, e.base+tc.path, frame, tc.n, false)
			if strings.Contains(res.Msg, "connection") { // possibly in the middle of a stream
				if !res.ResourceExhausted() {
					t.Errorf("%s: the refusal: %v", tc.name, res)
				}
				break
			}
		}
		t.Logf("%s: refused after %d calls, %.2f s of CPU", tc.name, calls, cpuSeconds(t)-cpu)
		if calls < 8 || calls > 40 { // 32 MiB: 32 streams, 16 calls, 8 of two messages
			t.Errorf("%s: the connection was refused after %d calls, want after about 32 MiB decoded", tc.name, calls)
		}
		if res := streamtest.Send(c, e.base+tc.path, frame, tc.n, false); !strings.Contains(res.Msg, "connection") || res.Answers != 0 {
			t.Errorf("%s: the next call on the connection: %v", tc.name, res)
		}
		empty := []byte{0, 0, 0, 0, 0} // an empty message, uncompressed
		if res := streamtest.Send(h2c(t), e.base+tc.path, empty, 1, false); res.Code != "0" || res.Answers != 1 {
			t.Errorf("%s: an empty message on another connection: %v", tc.name, res)
		}
		if res := streamtest.Send(c, e.base+tc.path, empty, 1, false, "X-Hasura-Admin-Secret", adminSecret); res.Code != "0" || res.Answers != 1 {
			t.Errorf("%s: the admin's empty message on the connection: %v", tc.name, res)
		}
	}
}
