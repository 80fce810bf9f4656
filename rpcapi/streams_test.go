package rpcapi_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
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

// h2c returns a client of its own HTTP/2 connection, closed when t ends, from
// local address ip if given (127.0.0.2...: another source address).
func h2c(t testing.TB, ip ...string) *http.Client {
	hc, done := streamtest.H2CFrom(strings.Join(ip, ""))
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
// connection, or keeps making unary calls of 2 MiB gzip bombs (to FileService, open
// to anonymous callers), is refused with RESOURCE_EXHAUSTED once it has had 32 MiB
// decoded, before its next call is decoded; another source address, and another
// caller on the same connection (a proxy's connection carries many), are served
// meanwhile. Each case comes from an address of its own (127.0.0.2...): the
// anonymous callers of one address have one budget over all their connections.
func TestConnBudget(t *testing.T) {
	e := newEnv(t)
	const getFile, getVersion = "/coffer.admin.v1.FileService/GetFile", "/coffer.admin.v1.ServerService/GetVersion"
	for i, tc := range []struct {
		name, path string
		frame      []byte
		n          int
	}{
		{"reflection streams", reflectionPath, streamtest.BombFrame(16<<10 - 64), 4096},
		{"unary calls", getFile, streamtest.BombFrame(2<<20 - 64), 1},
		// Calls refused after their bombs were decoded: by the count of a unary
		// call's messages, or because the bomb is not a message (field 0).
		{"unary calls of two messages", getFile, streamtest.BombFrame(2<<20 - 64), 2},
		{"unary calls of no message", getFile, streamtest.Frame(make([]byte, 2<<20-64)), 1},
	} {
		frame, c := tc.frame, h2c(t, fmt.Sprintf("127.0.0.%d", 2+i))
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
		if res := streamtest.Send(h2c(t, fmt.Sprintf("127.0.0.%d", 20+i)), e.base+getVersion, empty, 1, false); res.Code != "0" || res.Answers != 1 {
			t.Errorf("%s: an empty message from another address: %v", tc.name, res)
		}
		if res := streamtest.Send(c, e.base+getVersion, empty, 1, false, "X-Hasura-Admin-Secret", adminSecret); res.Code != "0" || res.Answers != 1 {
			t.Errorf("%s: the admin's empty message on the connection: %v", tc.name, res)
		}
	}
}

// TestManyPrincipalsOneConnection: on one HTTP/2 connection (a proxy's), callers
// that were served keep being served while more than 64 other principals of their
// tenant (a token issuer can mint any user id) come and go, and a few of them
// spend their whole budget: one before the connection had 64 callers, one after.
func TestManyPrincipalsOneConnection(t *testing.T) {
	e := newEnv(t)
	const getVersion = "/coffer.admin.v1.ServerService/GetVersion"
	c, bomb, empty := h2c(t), streamtest.BombFrame(16<<10-64), []byte{0, 0, 0, 0, 0}
	bearer := func(user string) []string { return []string{"Authorization", "Bearer " + token(t, "user", user)} }
	served := func(who string) bool {
		res := streamtest.Send(c, e.base+getVersion, empty, 1, false, bearer(who)...)
		return res.Code == "0" && res.Answers == 1
	}
	if !served("early") {
		t.Fatal("the first caller was refused")
	}
	for i := range 64 {
		if !served("filler" + strconv.Itoa(i)) {
			t.Fatalf("filler %d was refused", i)
		}
	}
	if !served("late") {
		t.Fatal("the caller after 65 others was refused")
	}
	for i := range 3 {
		who, streams := "flood"+strconv.Itoa(i), 0
		for ; streams < 40; streams++ { // each stream decodes 1 MiB: 32 of them exhaust a caller
			if res := streamtest.Send(c, e.base+reflectionPath, bomb, 4096, false, bearer(who)...); strings.Contains(res.Msg, "connection") {
				break
			}
		}
		t.Logf("%s: refused after %d streams", who, streams)
	}
	for _, who := range []string{"early", "late"} {
		if !served(who) {
			t.Errorf("%s: refused after 67 other principals came, 3 of them exhausting their budgets, on the connection", who)
		}
	}
}

// TestAnonymousNotDecoded: an anonymous unary call to a method that needs
// credentials is refused UNAUTHENTICATED before its message is decoded: a 2 MiB
// gzip bomb that is not even a message (decoding it would fail, INVALID_ARGUMENT)
// gets UNAUTHENTICATED, and 100 of them, on connections of their own, cost next to
// no CPU. Failed credentials are refused the same way.
func TestAnonymousNotDecoded(t *testing.T) {
	e := newEnv(t)
	junk := streamtest.Frame(bytes.Repeat([]byte{0xff}, 2<<20-64)) // field 31, wire type 7: not a message
	for _, tc := range []struct {
		name string
		hdr  []string
	}{
		{"anonymous", nil},
		{"wrong admin secret", []string{"X-Hasura-Admin-Secret", "nope"}},
	} {
		for _, path := range []string{"/coffer.admin.v1.BucketService/ListBuckets", "/coffer.admin.v1.RuleService/PutRules",
			"/coffer.admin.v1.TenantService/CreateTenant", "/coffer.admin.v1.ServerService/GetCacheStats"} {
			res := streamtest.Send(h2c(t), e.base+path, junk, 1, false, tc.hdr...)
			tenants := tc.hdr == nil && strings.Contains(path, "Tenant") // FAILED_PRECONDITION: multi-tenancy is off
			if want := map[bool]string{false: "16", true: "9"}[tenants]; res.Code != want {
				t.Errorf("%s %s: %v, want status %s without decoding", tc.name, path, res, want)
			}
			// The Connect protocol's unary call: the message alone, gzipped.
			r, _ := http.NewRequest("POST", e.base+path, bytes.NewReader(junk[5:]))
			r.Header.Set("Content-Type", "application/proto")
			r.Header.Set("Content-Encoding", "gzip")
			for i := 0; i+1 < len(tc.hdr); i += 2 {
				r.Header.Set(tc.hdr[i], tc.hdr[i+1])
			}
			resp, err := h2c(t).Do(r)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := map[bool]string{false: "unauthenticated", true: "failed_precondition"}[tenants]; !strings.Contains(string(b), `"code":"`+want+`"`) {
				t.Errorf("%s %s, Connect: %d %s, want %s without decoding", tc.name, path, resp.StatusCode, b, want)
			}
		}
	}
	bomb := streamtest.BombFrame(2<<20 - 64)
	cpu := cpuSeconds(t)
	for range 100 {
		streamtest.Send(h2c(t), e.base+"/coffer.admin.v1.BucketService/ListBuckets", bomb, 1, false)
	}
	used := cpuSeconds(t) - cpu
	t.Logf("100 anonymous 2 MiB gzip bombs to ListBuckets: %.2f s of CPU", used)
	if used > 0.3 {
		t.Errorf("100 anonymous 2 MiB gzip bombs to ListBuckets cost %.2f s of CPU: they were decoded", used)
	}
}

// TestAddressBudget: anonymous reflection bomb streams over 20 connections from
// one address are refused once the address has had its budget decoded (32 MiB, as
// one connection's), not 20 times that; the admin, from the same address, and an
// anonymous caller from another are served meanwhile.
func TestAddressBudget(t *testing.T) {
	e := newEnv(t)
	bomb := streamtest.BombFrame(16<<10 - 64)
	conns := make([]*http.Client, 20)
	for i := range conns {
		conns[i] = h2c(t)
	}
	cpu, streams, refused := cpuSeconds(t), 0, 0
	for round := 0; round < 40 && refused < len(conns); round++ {
		refused = 0
		for _, c := range conns {
			res := streamtest.Send(c, e.base+reflectionPath, bomb, 4096, false)
			streams++
			if strings.Contains(res.Msg, "address") && res.ResourceExhausted() {
				refused++
			}
		}
	}
	used := cpuSeconds(t) - cpu
	t.Logf("20 connections of anonymous reflection bomb streams: %d streams, every connection refused: %v, %.2f s of CPU",
		streams, refused == len(conns), used)
	if refused < len(conns) || streams > 100 {
		t.Errorf("%d streams on 20 connections from one address, %d connections refused at the end: want all refused after about 32", streams, refused)
	}
	if res := streamtest.Send(h2c(t), e.base+reflectionPath, bomb, 1, false); !strings.Contains(res.Msg, "address") || res.Answers != 0 {
		t.Errorf("an anonymous stream on a new connection: %v", res)
	}
	empty := []byte{0, 0, 0, 0, 0}
	if res := streamtest.Send(h2c(t), e.base+"/coffer.admin.v1.ServerService/GetVersion", empty, 1, false,
		"X-Hasura-Admin-Secret", adminSecret); res.Code != "0" || res.Answers != 1 {
		t.Errorf("the admin from the same address: %v", res)
	}
	if res := streamtest.Send(h2c(t, "127.0.0.2"), e.base+"/coffer.admin.v1.ServerService/GetVersion", empty, 1, false); res.Code != "0" || res.Answers != 1 {
		t.Errorf("an anonymous caller from another address: %v", res)
	}
}
