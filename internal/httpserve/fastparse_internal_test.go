package httpserve

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"testing"

	"golang.org/x/net/http/httpguts"
)

// smuggling are request heads the fast path must leave to net/http: the classic
// request smuggling and desync vectors (a body framed by Content-Length or
// Transfer-Encoding, in any spelling; line folding; bare CR or LF; whitespace before
// a colon; NUL and other controls; duplicate or odd Host), other protocols and forms.
var smuggling = []string{
	"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nGET /",
	"GET / HTTP/1.1\r\nHost: a\r\ncontent-length: 0\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nContent-Length : 5\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\tchunked\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n Transfer-Encoding: chunked\r\n\r\n", // obs-fold
	"GET / HTTP/1.1\r\nHost: a\r\nX: y\r\n\tz\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\r\n\r\n",         // bare LF ending the request line
	"GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", // bare LF inside the head
	"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", // bare CR
	"GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX: caf\xc3\xa9\r\n\r\n", // obs-text: net/http's call
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n",
	"GET / HTTP/1.1\r\n\r\n", // no Host
	"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a/b\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, Transfer-Encoding\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTE: trailers\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\n: empty name\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX Y: z\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX(Y): z\r\n\r\n",
	"GET / HTTP/1.0\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.2\r\nHost: a\r\n\r\n",
	"GET / http/1.1\r\nHost: a\r\n\r\n",
	"GET  / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1 \r\nHost: a\r\n\r\n",
	"GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET * HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a%00b HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a\x7fb HTTP/1.1\r\nHost: a\r\n\r\n",
	"get / HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
	"OPTIONS / HTTP/1.1\r\nHost: a\r\n\r\n",
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
}

func TestParseHeadLeavesSmugglingToNetHTTP(t *testing.T) {
	for _, s := range smuggling {
		var r FastRequest
		if res, _ := parseHead([]byte(s), &r); res != parseDecline {
			t.Errorf("%q: %v, want parseDecline", s, res)
		}
	}
}

func TestParseHead(t *testing.T) {
	var r FastRequest
	s := "GET /v1/files/abc?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nAuthorization:  Bearer t \r\nConnection: close\r\nX-Hasura-Role: user\r\n\r\nGET /next"
	res, n := parseHead([]byte(s), &r)
	if res != parseOK || n != strings.Index(s, "GET /next") {
		t.Fatalf("%v %d", res, n)
	}
	if r.Method != "GET" || string(r.Path) != "/v1/files/abc" || string(r.Query) != "x=1" || !r.Close || string(r.Host) != "127.0.0.1:8000" {
		t.Fatalf("%+v", r)
	}
	if v, ok := r.Get("authorization"); !ok || string(v) != "Bearer t" {
		t.Fatalf("Authorization %q %v", v, ok)
	}
	h := r.Header("Authorization", "x-hasura-")
	if len(h) != 2 || h.Get("Authorization") != "Bearer t" || h.Get("X-Hasura-Role") != "user" {
		t.Fatalf("Header: %v", h)
	}
	for _, s := range []string{"GET / HTTP/1.1\nHost: a\n", "GET / HTTP/1.1\r\nHost: a\n", "\n",
		"GET /a b c\r\nHost: a\r\n", "GET / HTTP/1.1\r\nContent-Length: 5\r\n", "GET / HTTP/1.1\r\nX Y: z\r\n"} {
		if res, _ := parseHead([]byte(s), &r); res != parseDecline {
			t.Errorf("incomplete %q: %v, want parseDecline (net/http answers it now)", s, res)
		}
	}
	for _, s := range []string{"", "G", "GET /", "HEAD /x HTTP/1.1\r\nHost: a\r\n", "GET / HTTP/1.1\r\nHost: a\r\n\r"} {
		if res, _ := parseHead([]byte(s), &r); res != parseIncomplete {
			t.Errorf("%q: %v, want parseIncomplete", s, res)
		}
	}
	var many strings.Builder
	many.WriteString("GET / HTTP/1.1\r\nHost: a\r\n")
	for range fastMaxHeaders {
		many.WriteString("X: y\r\n")
	}
	if res, _ := parseHead([]byte(many.String()+"\r\n"), &r); res != parseDecline {
		t.Errorf("%d header fields: %v, want parseDecline", fastMaxHeaders+1, res)
	}
}

// FuzzFastParse is the fast path's safety argument: for any bytes, a head parseHead
// accepts is one net/http reads the same way (same method, target, Host and header
// fields, no body, same end of the head, same keep-alive) and accepts as a server
// (one valid Host, valid names and values), so both agree on where the next request
// begins and on what this one asks.
func FuzzFastParse(f *testing.F) {
	f.Add([]byte("GET /v1/files/x HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer t\r\n\r\nGET / HTTP/1.1\r\n"))
	f.Add([]byte("HEAD /a?b=c HTTP/1.1\r\nHost: [::1]:80\r\nConnection: close\r\nX-Request-Id: r1\r\n\r\n"))
	for _, s := range smuggling {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r FastRequest
		res, n := parseHead(data, &r)
		if res != parseOK {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(data), len(data)+16) // all of data buffered: Buffered tells where the head ends
		hr, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("fast path accepts what net/http refuses (%v): %q", err, data)
		}
		checkSameRequest(t, data, &r, hr)
		if hr.ContentLength != 0 || len(hr.TransferEncoding) != 0 {
			t.Fatalf("net/http sees a body (%d, %v): %q", hr.ContentLength, hr.TransferEncoding, data)
		}
		if body, _ := io.ReadAll(hr.Body); len(body) != 0 {
			t.Fatalf("net/http read a body %q: %q", body, data)
		}
		if consumed := len(data) - br.Buffered(); consumed != n {
			t.Fatalf("net/http's head ends at %d, the fast path's at %d: %q", consumed, n, data)
		}
	})
}

// checkSameRequest fails unless net/http's hr is what the fast path parsed into r.
func checkSameRequest(t *testing.T, data []byte, r *FastRequest, hr *http.Request) {
	t.Helper()
	target := string(r.Path)
	if len(r.Query) > 0 || bytes.Contains(data[:bytes.Index(data, []byte(" HTTP/1.1"))], []byte("?")) {
		target += "?" + string(r.Query)
	}
	if hr.Method != r.Method || hr.RequestURI != target || hr.URL.Path != string(r.Path) || hr.URL.RawQuery != string(r.Query) {
		t.Fatalf("net/http: %s %q (path %q query %q), fast path: %s %q: %q", hr.Method, hr.RequestURI, hr.URL.Path, hr.URL.RawQuery, r.Method, target, data)
	}
	if hr.Close != r.Close || hr.Host != string(r.Host) || !httpguts.ValidHostHeader(hr.Host) {
		t.Fatalf("Close %v/%v Host %q/%q: %q", hr.Close, r.Close, hr.Host, r.Host, data)
	}
	// The server refuses several Host fields; ReadRequest keeps them in Header.
	if hosts := hr.Header.Values("Host"); len(hosts) > 1 {
		t.Fatalf("several Host fields accepted: %q", data)
	}
	all := r.Header("")
	for k, vs := range hr.Header {
		if k == "Cache-Control" && len(all[k]) == 0 {
			continue // net/http adds it for "Pragma: no-cache"
		}
		if !httpguts.ValidHeaderFieldName(k) {
			t.Fatalf("invalid name %q accepted: %q", k, data)
		}
		for i, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) || i >= len(all[k]) || all[k][i] != v {
				t.Fatalf("field %s: net/http %q, fast path %q: %q", k, vs, all[k], data)
			}
		}
	}
	for k, vs := range all {
		if k != "Host" && len(hr.Header[textproto.CanonicalMIMEHeaderKey(k)]) != len(vs) {
			t.Fatalf("field %s: fast path %q, net/http %q: %q", k, vs, hr.Header[k], data)
		}
	}
}
