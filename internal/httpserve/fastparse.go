package httpserve

import (
	"bytes"
	"context"
	"net/http"
	"net/netip"
	"net/textproto"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The fast path's request parser. It reads only the plainest HTTP/1.1 request heads:
// a GET or HEAD with no body, CRLF line ends, no line folding, only visible ASCII,
// exactly one valid Host header and no header that frames a body or changes the
// protocol. Anything else is not an error here but "not mine": the whole connection,
// this request's bytes included, goes to net/http, which decides. So the fast path
// never answers a request net/http would refuse, and never reads a request's framing
// differently from net/http: FuzzFastParse checks both against http.ReadRequest and
// the server's own Host checks.

// parseResult is what parseHead found.
type parseResult int

const (
	parseIncomplete parseResult = iota // no CRLFCRLF yet: read more
	parseOK                            // a request the fast path may serve
	parseDecline                       // valid or not, net/http reads it
)

// Limits of a request head the fast path reads; a longer one goes to net/http.
const (
	fastMaxHeaders = 32
	fastMaxTarget  = 2048
	// fastBufSize is a connection's read buffer: a request head must fit in it.
	fastBufSize = 4 << 10
)

// FastRequest is a request head the fast path parsed. Its byte slices point into the
// connection's read buffer and are valid only until the handler returns.
type FastRequest struct {
	Method string // http.MethodGet or http.MethodHead
	// Path is the request target up to '?', Query what follows it ("" if none).
	Path, Query []byte
	Close       bool      // Connection: close: the connection ends after the answer
	Start       time.Time // when the request was parsed
	Host        []byte
	// Peer is the client's address (the connection's remote address), unmapped.
	Peer   netip.AddrPort
	ctx    context.Context // the connection's: cancelled when it ends
	n      int             // header fields in fields
	fields [fastMaxHeaders]field
}

// Context returns the request's context: it ends with the connection (or when a
// shutdown gives up waiting), not when the client leaves mid-request, since the fast
// path does not read while it answers.
func (r *FastRequest) Context() context.Context { return r.ctx }

// field is one header field of a FastRequest.
type field struct{ name, value []byte }

// Get returns the value of the first header field named name (ASCII
// case-insensitive), and whether there is one.
func (r *FastRequest) Get(name string) ([]byte, bool) {
	for i := range r.fields[:r.n] {
		if equalFold(r.fields[i].name, name) {
			return r.fields[i].value, true
		}
	}
	return nil, false
}

// Values appends to dst the values of every header field named name (ASCII
// case-insensitive), in order, and returns it.
func (r *FastRequest) Values(name string, dst []string) []string {
	for i := range r.fields[:r.n] {
		if equalFold(r.fields[i].name, name) {
			dst = append(dst, string(r.fields[i].value))
		}
	}
	return dst
}

// Has reports whether any of names is among the request's header fields.
func (r *FastRequest) Has(names ...string) bool {
	for _, n := range names {
		if _, ok := r.Get(n); ok {
			return true
		}
	}
	return false
}

// Header returns the request's header fields whose names begin with one of prefixes
// (ASCII case-insensitive; "" selects all) as an http.Header, nil if none. Only the
// fields selected cost allocations.
func (r *FastRequest) Header(prefixes ...string) http.Header {
	var h http.Header
	for i := range r.fields[:r.n] {
		f := &r.fields[i]
		if !hasPrefixFold(f.name, prefixes) {
			continue
		}
		if h == nil {
			h = make(http.Header, 2)
		}
		k := textproto.CanonicalMIMEHeaderKey(string(f.name))
		h[k] = append(h[k], string(f.value))
	}
	return h
}

// hasPrefixFold reports whether name begins with one of prefixes, ignoring ASCII case.
func hasPrefixFold(name []byte, prefixes []string) bool {
	for _, p := range prefixes {
		if len(name) >= len(p) && equalFold(name[:len(p)], p) {
			return true
		}
	}
	return false
}

// parseHead parses the request head at the start of b: it returns parseOK and the
// head's length n, parseIncomplete if b holds no whole head yet, or parseDecline.
func parseHead(b []byte, r *FastRequest) (res parseResult, n int) {
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(b) > 0 && !startsLikeGet(b) || bareLF(b) || badStart(b, r) {
			// Not worth waiting for (h2c's preface, POST, a line already refused), or
			// never ending in CRLFCRLF (lines ended by LF alone): net/http answers now.
			return parseDecline, 0
		}
		return parseIncomplete, 0
	}
	head := b[:end+2] // every line with its CRLF
	line, rest, _ := bytes.Cut(head, []byte("\r\n"))
	if !parseRequestLine(line, r) {
		return parseDecline, 0
	}
	r.n, r.Close, r.Host = 0, false, nil
	hosts := 0
	for len(rest) > 0 {
		line, rest, _ = bytes.Cut(rest, []byte("\r\n"))
		name, value, ok := parseField(line)
		if !ok || r.n == fastMaxHeaders {
			return parseDecline, 0
		}
		switch {
		case equalFold(name, "Host"):
			hosts++
			r.Host = value
		case equalFold(name, "Connection"):
			if !connectionValue(value, &r.Close) {
				return parseDecline, 0
			}
		case framingHeader(name):
			return parseDecline, 0
		}
		r.fields[r.n] = field{name, value}
		r.n++
	}
	if hosts != 1 || !httpguts.ValidHostHeader(string(r.Host)) {
		return parseDecline, 0
	}
	return parseOK, end + 4
}

// badStart reports whether the whole lines at the start of b, an incomplete head,
// already make it one parseHead declines. It parses into r.
func badStart(b []byte, r *FastRequest) bool {
	line, rest, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok {
		return false
	}
	if !parseRequestLine(line, r) {
		return true
	}
	for {
		if line, rest, ok = bytes.Cut(rest, []byte("\r\n")); !ok {
			return false
		}
		if name, _, ok := parseField(line); !ok || framingHeader(name) {
			return true
		}
	}
}

// bareLF reports whether b has an LF not preceded by CR.
func bareLF(b []byte) bool {
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			return true
		}
	}
	return false
}

// startsLikeGet reports whether b could begin a GET or HEAD request line.
func startsLikeGet(b []byte) bool {
	for _, m := range [...]string{"GET ", "HEAD "} {
		k := min(len(b), len(m))
		if string(b[:k]) == m[:k] {
			return true
		}
	}
	return false
}

// parseRequestLine reads "GET /target HTTP/1.1" (or HEAD) into r: an origin-form
// target of plain characters only.
func parseRequestLine(line []byte, r *FastRequest) bool {
	switch {
	case bytes.HasPrefix(line, []byte("GET /")):
		r.Method, line = http.MethodGet, line[4:]
	case bytes.HasPrefix(line, []byte("HEAD /")):
		r.Method, line = http.MethodHead, line[5:]
	default:
		return false
	}
	target, ok := bytes.CutSuffix(line, []byte(" HTTP/1.1"))
	if !ok || len(target) > fastMaxTarget || !plainTarget(target) {
		return false
	}
	r.Path, r.Query, _ = bytes.Cut(target, []byte("?"))
	return true
}

// plainTarget reports whether t has only unreserved characters, sub-delims, ':',
// '@', '/' and '?' (no '%', no '#', no space or control).
func plainTarget(t []byte) bool {
	for _, c := range t {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			bytes.IndexByte([]byte("-._~!$&'()*+,;=:@/?"), c) >= 0) {
			return false
		}
	}
	return true
}

// parseField reads "name: value" (optional spaces or tabs around the value): a
// token name right before the colon, a value of visible ASCII, spaces and tabs.
func parseField(line []byte) (name, value []byte, ok bool) {
	name, value, ok = bytes.Cut(line, []byte(":"))
	if !ok || len(name) == 0 {
		return nil, nil, false
	}
	for _, c := range name {
		if !httpguts.IsTokenRune(rune(c)) {
			return nil, nil, false
		}
	}
	for _, c := range value {
		if (c < ' ' || c > '~') && c != '\t' {
			return nil, nil, false // controls (bare CR or LF among them), DEL, obs-text
		}
	}
	return name, bytes.Trim(value, " \t"), true
}

// connectionValue reads a Connection header the fast path accepts: "keep-alive" or
// "close" alone; close is set for the latter.
func connectionValue(v []byte, close *bool) bool {
	switch {
	case equalFold(v, "close"):
		*close = true
		return true
	case equalFold(v, "keep-alive"):
		return true
	}
	return false
}

// framingHeader reports whether a header field named name could give the request a
// body or change the protocol: such requests are net/http's.
func framingHeader(name []byte) bool {
	for _, h := range [...]string{"Content-Length", "Transfer-Encoding", "Upgrade", "Expect", "Te", "Trailer", "Http2-Settings", "Keep-Alive"} {
		if equalFold(name, h) {
			return true
		}
	}
	return false
}

// equalFold reports whether b equals the ASCII string s, ignoring ASCII case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

// lower is c in lower case if it is an ASCII letter, else c.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
