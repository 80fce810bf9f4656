package hostile

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coffer/coffer/internal/streamtest"
)

// The RPC face's streams (gRPC server reflection v1 and v1alpha, health watches)
// are open to anonymous callers. A stream of per-message gzip bombs had the server
// inflate and decode 2 GiB for 2 MiB sent (about 7.5 s of CPU): each stream must
// now be cut with RESOURCE_EXHAUSTED having cost at most streamCPU, and a
// connection that keeps opening such streams must be refused.

// streamCPU is the most server CPU one hostile stream may cost (issue 31).
const streamCPU = 0.2

// streamPaths are the face's streaming methods.
var streamPaths = []string{
	"/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
	"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
	"/grpc.health.v1.Health/Watch",
}

// TestStreamBudgets: category "streams", on the multi-tenant server with h2c (as
// the review ran it), at the default tenant's host and at tenant a's: 2 MiB bodies
// of gzip bombs over h2c (the gRPC protocol and Connect streaming), anonymous, on
// every streaming method and on unary health checks, then streams on one
// connection, to both tenants' hosts in turn, until it is refused; then the
// callers (streams_callers_test.go): two tenants' admins on one connection, 69
// principals of one tenant on one, anonymous calls of methods that need
// credentials (refused before they are decoded), and anonymous streams on 20
// connections from one address.
func TestStreamBudgets(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("streams")
	for i, host := range []string{defaultHost, ts.a.host} {
		for j, size := range []int{2<<20 - 64, 16<<10 - 64, 64} { // past the message limit; within it; tiny (the count)
			// Each part comes from a loopback address of its own: the anonymous
			// callers of one address share one budget over all their connections.
			src := fmt.Sprintf("127.0.0.%d", 20+3*i+j)
			frame := streamtest.BombFrame(size)
			n := (2<<20 - 4096) / len(frame) // a body of about 2 MiB, the most the face reads of one call
			for _, path := range streamPaths {
				for _, connect := range []bool{false, true} {
					what := fmt.Sprintf("%s %s%s, %d messages of %d bytes", map[bool]string{false: "grpc", true: "connect"}[connect], host, path, n, size)
					ts.bombStream(tl, what, src, host, path, frame, n, connect)
				}
			}
		}
		// A unary health check of a 2 MiB gzip bomb: over the message limit.
		res := streamtest.Send(ts.h2cFrom("127.0.0.19"), ts.url+"/grpc.health.v1.Health/Check", streamtest.BombFrame(2<<20-64), 1, false, "Host", host)
		tl.probe(host+": health check, a 2 MiB gzip bomb", streamAnswer(res), map[bool]string{false: "not refused"}[res.ResourceExhausted()])
	}
	ts.connBudget(tl, defaultHost, ts.a.host, ts.b.host)
	ts.tenantAdminsApart(tl)
	ts.manyPrincipals(tl)
	ts.anonymousNotDecoded(tl)
	ts.addressBudget(tl)
}

// bombStream sends one bomb stream to host on a connection of its own from local
// address src: it must be cut, having cost at most streamCPU.
func (s *server) bombStream(tl *tally, what, src, host, path string, frame []byte, n int, connect bool) {
	cpu := s.cpuSeconds()
	res := streamtest.Send(s.h2cFrom(src), s.url+path, frame, n, connect, "Host", host)
	used := s.cpuSeconds() - cpu
	s.t.Logf("%s: %v, %.3f s of CPU", what, res, used)
	wrong := ""
	switch {
	case used > streamCPU:
		wrong = fmt.Sprintf("cost %.2f s of CPU", used)
	case res.Answers >= n || !cut(res, path):
		wrong = "not cut"
	}
	tl.probe(what, streamAnswer(res), wrong)
}

// connBudget opens streams of 16 KiB bombs on one h2c connection, to hosts in turn,
// until it is refused (each is cut at the stream's budget): the refusal must come,
// and the whole connection must have cost little.
func (s *server) connBudget(tl *tally, hosts ...string) {
	hc, frame := s.h2cFrom("127.0.0.13"), streamtest.BombFrame(16<<10-64)
	cpu, refused := s.cpuSeconds(), 0
	for i := 0; i < 100 && refused == 0 && s.cpuSeconds()-cpu <= 1; i++ {
		res := streamtest.Send(hc, s.url+streamPaths[0], frame, 4096, false, "Host", hosts[i%len(hosts)])
		if strings.Contains(res.Msg, "connection") {
			refused = i + 1
		}
	}
	used := s.cpuSeconds() - cpu
	s.t.Logf("one connection to %v: refused at stream %d, %.2f s of CPU", hosts, refused, used)
	wrong := ""
	if refused == 0 || used > 1 {
		wrong = fmt.Sprintf("refused at stream %d (0: never), %.2f s of CPU", refused, used)
	}
	tl.probe("streams on one connection", answer{status: http.StatusOK}, wrong)
}

// cut reports whether the server ended the stream with RESOURCE_EXHAUSTED or, for
// a health watch (which no one serves, and which takes one request at most),
// UNIMPLEMENTED before any answer.
func cut(r streamtest.Result, path string) bool {
	unimplemented := r.Code == "12" || r.Code == "unimplemented"
	return r.ResourceExhausted() || unimplemented && strings.HasSuffix(path, "/Watch") && r.Answers == 0
}

// streamAnswer is a stream's result as the tally counts it.
func streamAnswer(r streamtest.Result) answer {
	return answer{status: r.HTTPStatus, header: r.Header, body: []byte(r.String())}
}

// h2cClient is a client of its own connection, over HTTP/2 without TLS.
func (s *server) h2cClient() *http.Client { return s.h2cFrom("") }

// h2cFrom is h2cClient from local address ip (127.0.0.2...: another source).
func (s *server) h2cFrom(ip string) *http.Client {
	hc, done := streamtest.H2CFrom(ip)
	s.t.Cleanup(done)
	return hc
}

// cpuSeconds is the CPU time of this process, which runs the server; the client's
// part of a probe is small.
func (s *server) cpuSeconds() float64 {
	c, err := streamtest.CPU("self")
	if err != nil {
		s.t.Skip(err)
	}
	return c
}
