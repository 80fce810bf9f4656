package hostile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// refusedAs is one way the tenant router refuses a request: the HTTP status of the
// protocols that carry one (/v1, Connect unary), the Connect code and its gRPC
// number.
type refusedAs struct {
	status int
	code   string
	grpc   int
}

var (
	refusedUnknown   = refusedAs{http.StatusNotFound, "not_found", 5}
	refusedSuspended = refusedAs{http.StatusForbidden, "permission_denied", 7}
	refusedLimited   = refusedAs{http.StatusTooManyRequests, "resource_exhausted", 8}
)

// refusedTarget is a host and path prefix that the tenant router refuses.
type refusedTarget struct {
	what, host, prefix string
	want               refusedAs
}

// refusalProbe is one protocol's request and the check of its answer ("" = right).
type refusalProbe struct {
	name  string
	h2c   bool // sent over HTTP/2 without TLS
	req   func(host, prefix string) *http.Request
	check func(a answer, want refusedAs) string
}

// refusalEnvelope is an empty message in gRPC's (and Connect streaming's) framing.
var refusalEnvelope = string([]byte{0, 0, 0, 0, 0})

// newRefusalReq builds a POST (or GET without body) to the default host's URL.
func newRefusalReq(base, method, path, body string, hdr ...string) *http.Request {
	req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return req
}

// refusalProbes are the protocols a refusal must answer in: hasura JSON on /v1
// (GET and HEAD), Connect unary JSON (as the console calls it, without
// Connect-Protocol-Version, with it, and as a GET), Connect streaming, gRPC over
// h2c and gRPC-Web.
func refusalProbes(base string) []refusalProbe {
	const method = "/coffer.admin.v1.FileService/GetFile"
	rpc := func(ctype, body string, hdr ...string) func(string, string) *http.Request {
		return func(_, prefix string) *http.Request {
			return newRefusalReq(base, "POST", prefix+method, body, append([]string{"Content-Type", ctype}, hdr...)...)
		}
	}
	return []refusalProbe{
		{"/v1 GET", false, func(_, p string) *http.Request { return newRefusalReq(base, "GET", p+"/v1/files/"+missingFile, "") }, hasuraRefusal},
		{"/v1 HEAD", false, func(_, p string) *http.Request { return newRefusalReq(base, "HEAD", p+"/v1/files/"+missingFile, "") }, headRefusal},
		{"connect json (console)", false, rpc("application/json", `{"id":"x"}`), connectUnaryRefusal},
		{"connect json", false, rpc("application/json", `{"id":"x"}`, "Connect-Protocol-Version", "1"), connectUnaryRefusal},
		{"connect proto", false, rpc("application/proto", "", "Connect-Protocol-Version", "1"), connectUnaryRefusal},
		{"connect get", false, func(_, p string) *http.Request {
			q := url.Values{"encoding": {"json"}, "message": {`{"id":"x"}`}, "connect": {"v1"}}
			return newRefusalReq(base, "GET", p+method+"?"+q.Encode(), "")
		}, connectUnaryRefusal},
		{"connect stream", false, rpc("application/connect+json", refusalEnvelope, "Connect-Protocol-Version", "1"), connectStreamRefusal},
		{"grpc h2c", true, rpc("application/grpc", refusalEnvelope, "TE", "trailers"), grpcRefusal},
		{"grpc-web", false, rpc("application/grpc-web+proto", refusalEnvelope), grpcRefusal},
	}
}

// hasuraRefusal checks hasura-storage's error body.
func hasuraRefusal(a answer, want refusedAs) string {
	var b struct {
		Error *struct{ Message string } `json:"error"`
	}
	switch {
	case a.status != want.status:
		return fmt.Sprintf("status %d, want %d", a.status, want.status)
	case json.Unmarshal(a.body, &b) != nil || b.Error == nil || b.Error.Message == "":
		return `not hasura's {"error":{"message":...}}`
	}
	return limitHeaders(a, want)
}

// headRefusal checks a HEAD's refusal: the status, no body, and no Content-Length
// or Content-Type of a body it does not send (hasura-storage's HEAD errors).
func headRefusal(a answer, want refusedAs) string {
	if a.status != want.status || len(a.body) != 0 {
		return fmt.Sprintf("status %d with %d body bytes, want %d without a body", a.status, len(a.body), want.status)
	}
	for _, k := range []string{"Content-Length", "Content-Type"} {
		if v, ok := a.header[k]; ok {
			return fmt.Sprintf("%s %q on a HEAD refusal", k, v)
		}
	}
	return limitHeaders(a, want)
}

// connectUnaryRefusal checks Connect's unary error: JSON {"code":...} with the
// code's HTTP status.
func connectUnaryRefusal(a answer, want refusedAs) string {
	var b struct{ Code, Message string }
	switch {
	case a.status != want.status:
		return fmt.Sprintf("status %d, want %d", a.status, want.status)
	case !strings.HasPrefix(a.header.Get("Content-Type"), "application/json"):
		return "Content-Type " + a.header.Get("Content-Type") + ", want application/json"
	case json.Unmarshal(a.body, &b) != nil || b.Code != want.code || b.Message == "":
		return fmt.Sprintf(`not Connect's {"code":%q,"message":...}`, want.code)
	}
	return limitHeaders(a, want)
}

// connectStreamRefusal checks a Connect stream's refusal: HTTP 200 and one
// end-of-stream message (flag 2) whose error has the code.
func connectStreamRefusal(a answer, want refusedAs) string {
	var end struct {
		Error *struct{ Code, Message string } `json:"error"`
	}
	b := a.body
	switch {
	case a.status != http.StatusOK:
		return fmt.Sprintf("status %d, want 200 (the error is in the stream)", a.status)
	case len(b) < 5 || b[0] != 2 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-5:
		return "not one end-of-stream message"
	case json.Unmarshal(b[5:], &end) != nil || end.Error == nil || end.Error.Code != want.code:
		return fmt.Sprintf("the end-of-stream message has no error %q", want.code)
	}
	return limitHeaders(a, want)
}

// grpcRefusal checks gRPC's (and gRPC-Web's) refusal: HTTP 200, grpc-status (in
// the trailers, or the headers of a trailers-only answer) and a grpc-message.
func grpcRefusal(a answer, want refusedAs) string {
	st, msg := a.header.Get("Grpc-Status"), a.header.Get("Grpc-Message")
	if b := a.body; st == "" && len(b) > 5 && b[0] == 0x80 { // gRPC-Web's trailers frame
		for _, line := range strings.Split(string(b[5:]), "\r\n") {
			k, v, _ := strings.Cut(line, ":")
			switch strings.ToLower(k) {
			case "grpc-status":
				st = strings.TrimSpace(v)
			case "grpc-message":
				msg = strings.TrimSpace(v)
			}
		}
	}
	switch {
	case a.status != http.StatusOK:
		return fmt.Sprintf("status %d, want 200 (the status is in grpc-status)", a.status)
	case st != strconv.Itoa(want.grpc) || msg == "":
		return fmt.Sprintf("grpc-status %q grpc-message %q, want %d with a message", st, msg, want.grpc)
	}
	return limitHeaders(a, want)
}

// limitHeaders checks that a rate limit's refusal says when to come back.
func limitHeaders(a answer, want refusedAs) string {
	if want == refusedLimited && a.header.Get("Retry-After") == "" {
		return "a rate limit's refusal without Retry-After"
	}
	return ""
}

// TestHostileRefusals: the tenant router's refusals (an unknown host, wildcard
// label or path prefix; a suspended tenant by its host, wildcard and path prefix;
// a tenant over its rate limit) answer every protocol in its own format, each with
// the refusal's status or code: hasura JSON on /v1, Connect's JSON error (the
// console's calls included), a Connect stream's end message, gRPC's trailers over
// h2c and gRPC-Web's.
func TestHostileRefusals(t *testing.T) {
	ts := newTenantServer(t)
	tl := ts.tally("refusals")
	ts.mustRPC(http.StatusOK, defaultHost, "TenantService/SuspendTenant", `{"id":"b"}`, "X-Coffer-Platform-Secret", platformSecret)
	create := `{"id":"c","hosts":["c.test"],"settings":{"adminSecrets":["hostile-c-admin-secret-0123"],` +
		`"limits":{"requestsPerSecond":0.001,"burst":1}}}`
	ts.mustRPC(http.StatusOK, defaultHost, "TenantService/CreateTenant", create, "X-Coffer-Platform-Secret", platformSecret)
	ts.mustHost(http.StatusOK, "c.test", "GET", "/v1/version", "") // its one request in 1000 s
	targets := []refusedTarget{
		{"unknown host", "nobody.test", "", refusedUnknown},
		{"unknown wildcard label", "zz." + wildSuffix, "", refusedUnknown},
		{"unknown path prefix", defaultHost, "/t/zz", refusedUnknown},
		{"suspended host", ts.b.host, "", refusedSuspended},
		{"suspended wildcard", ts.b.wildHost(), "", refusedSuspended},
		{"suspended path prefix", defaultHost, "/t/b", refusedSuspended},
		{"rate limit", "c.test", "", refusedLimited},
		{"rate limit path prefix", defaultHost, "/t/c", refusedLimited},
	}
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	h2cClient := &http.Client{Transport: h2c}
	defer h2c.CloseIdleConnections()
	var wg sync.WaitGroup // a rate limit's refusal waits a second: the targets go at once
	for _, tg := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, p := range refusalProbes(ts.url) {
				req := p.req(tg.host, tg.prefix)
				req.Host = tg.host
				var a answer
				if p.h2c {
					a = readTrailed(h2cClient.Do(req))
				} else {
					a = readTrailed(ts.client.Do(req))
				}
				tl.probe(tg.what+" / "+p.name, a, p.check(a, tg.want))
			}
		}()
	}
	wg.Wait()
}

// readTrailed reads a response in full, its trailers added to its headers (gRPC
// puts its status there).
func readTrailed(resp *http.Response, err error) answer {
	if err != nil {
		return answer{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return answer{status: resp.StatusCode, header: resp.Header, body: []byte("reading the body: " + err.Error())}
	}
	h := resp.Header.Clone()
	for k, v := range resp.Trailer {
		h[k] = v
	}
	return answer{status: resp.StatusCode, header: h, body: body.Bytes()}
}
