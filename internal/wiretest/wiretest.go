// Package wiretest sends raw HTTP/1.1 request streams to a server in tests and
// reads back every answer, for comparing servers answer by answer (the fast path
// against net/http).
package wiretest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Quiet is how long a server may send nothing before Exchange takes its answers
// as complete.
const Quiet = 1500 * time.Millisecond

// Exchange sends raw on one connection to addr and returns every answer read until
// the server closes the connection or sends nothing for Quiet, each rendered by
// render (which reads and closes the body); bytes that do not parse as an answer
// end the list as "unparsed: ...". The write side stays open: net/http takes a
// half-closed connection for a client that left and cancels the request in
// flight. An error to connect or send fails t and returns nil.
func Exchange(t testing.TB, addr, raw string, render func(*http.Response) string) []string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Error(err)
		return nil
	}
	var out []string
	br := bufio.NewReader(quietReader{c})
	methods := Methods(raw)
	for i := 0; ; i++ {
		m := "GET"
		if i < len(methods) {
			m = methods[i]
		}
		resp, err := http.ReadResponse(br, &http.Request{Method: m})
		if err != nil {
			if rest, _ := io.ReadAll(br); len(rest) > 0 {
				out = append(out, fmt.Sprintf("unparsed: %q", rest))
			}
			return out
		}
		out = append(out, render(resp))
	}
}

// quietReader reads from c until it sends nothing for Quiet.
type quietReader struct{ c net.Conn }

func (r quietReader) Read(p []byte) (int, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(Quiet))
	return r.c.Read(p)
}

// Methods returns the methods (GET or HEAD) of the request lines in raw, in order:
// an answer to HEAD has no body to read.
func Methods(raw string) []string {
	var ms []string
	for _, line := range strings.Split(raw, "\r\n") {
		if m, _, ok := strings.Cut(line, " /"); ok && (m == "GET" || m == "HEAD") {
			ms = append(ms, m)
		}
	}
	return ms
}

// Checksum is FNV-1a of b, a cheap checksum for comparing bodies.
func Checksum(b []byte) uint32 {
	var h uint32 = 2166136261
	for _, c := range b {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

// Render renders resp for comparing answers: protocol, status, whether the
// connection closes, the header fields sorted by name, each as mask shows it
// (keep false leaves it out; a nil mask shows every field's values joined by
// "|"), and the body's length and checksum. It reads and closes the body.
func Render(resp *http.Response, mask func(name string, values []string) (shown string, keep bool)) string {
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s close=%v", resp.Proto, resp.Status, resp.Close)
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, keep := strings.Join(resp.Header[k], "|"), true
		if mask != nil {
			v, keep = mask(k, resp.Header[k])
		}
		if keep {
			fmt.Fprintf(&b, "\n%s: %s", k, v)
		}
	}
	fmt.Fprintf(&b, "\nbody %d bytes (err %v) checksum %x", len(body), err, Checksum(body))
	return b.String()
}
