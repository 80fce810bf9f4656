// Package streamtest sends raw gRPC and Connect streams of hostile messages (gzip
// bombs) and reads their answers, and reads a process's CPU time from /proc: for
// the tests of the RPC face's stream budgets (rpcapi, internal/hostile), which
// must send what no generated client would.
package streamtest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
)

// BombFrame is one gzipped envelope of a message of size bytes: field 1 (a string
// in reflection's and health's requests) sent again and again, empty (0x0a 0x00),
// so that the message costs its whole size to inflate and decode while its answer
// is small. It is about a thousandth of size.
func BombFrame(size int) []byte { return Frame(bytes.Repeat([]byte{0x0a, 0x00}, size/2)) }

// Frame is one envelope of msg, gzipped.
func Frame(msg []byte) []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	_, _ = zw.Write(msg)
	_ = zw.Close()
	frame := []byte{1, 0, 0, 0, 0} // compressed
	binary.BigEndian.PutUint32(frame[1:], uint32(z.Len()))
	return append(frame, z.Bytes()...)
}

// Result is what a stream got back: its status (a gRPC code number, or a Connect
// code name: "" for success) and message, the messages answered and the HTTP
// status, or the transport's error.
type Result struct {
	HTTPStatus int
	Header     http.Header
	Answers    int
	Code, Msg  string
	Err        error
}

// ResourceExhausted reports whether the stream ended with RESOURCE_EXHAUSTED.
func (r Result) ResourceExhausted() bool { return r.Code == "8" || r.Code == "resource_exhausted" }

// String describes r.
func (r Result) String() string {
	if r.Err != nil {
		return r.Err.Error()
	}
	return fmt.Sprintf("%d answers, status %q %q", r.Answers, r.Code, r.Msg)
}

// Send sends n copies of frame as one call of url over hc, with the gRPC protocol
// or Connect streaming (connect true) and headers hdr (key, value pairs; "Host"
// sets the request's host), and reads the answer to its end.
func Send(hc *http.Client, url string, frame []byte, n int, connect bool, hdr ...string) Result {
	req, err := http.NewRequest("POST", url, bytes.NewReader(bytes.Repeat(frame, n)))
	if err != nil {
		return Result{Err: err}
	}
	if connect {
		req.Header.Set("Content-Type", "application/connect+proto")
		req.Header.Set("Connect-Content-Encoding", "gzip")
	} else {
		req.Header.Set("Content-Type", "application/grpc")
		req.Header.Set("Grpc-Encoding", "gzip")
		req.Header.Set("Te", "trailers")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if http.CanonicalHeaderKey(hdr[i]) == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close()
	r := Result{HTTPStatus: resp.StatusCode, Header: resp.Header}
	r.read(resp.Body)
	if !connect {
		r.Code, r.Msg = resp.Trailer.Get("Grpc-Status"), resp.Trailer.Get("Grpc-Message")
		if r.Code == "" { // a trailers-only answer
			r.Code, r.Msg = resp.Header.Get("Grpc-Status"), resp.Header.Get("Grpc-Message")
		}
	}
	return r
}

// read counts the messages of body, and reads Connect's end of stream.
func (r *Result) read(body io.Reader) {
	br := bufio.NewReader(body)
	for {
		var prefix [5]byte
		if _, err := io.ReadFull(br, prefix[:]); err != nil {
			return
		}
		data := make([]byte, binary.BigEndian.Uint32(prefix[1:]))
		if _, err := io.ReadFull(br, data); err != nil {
			return
		}
		if prefix[0]&2 == 0 {
			r.Answers++
			continue
		}
		var end struct {
			Error struct{ Code, Message string }
		}
		_ = json.Unmarshal(data, &end)
		r.Code, r.Msg = end.Error.Code, end.Error.Message
	}
}

// H2C returns a client of its own connection, over HTTP/2 without TLS, and the
// function that closes it.
func H2C() (*http.Client, func()) { return H2CFrom("") }

// H2CFrom is H2C from local address ip ("": any): a loopback one other than
// 127.0.0.1 (127.0.0.2...) is another source address to the server.
func H2CFrom(ip string) (*http.Client, func()) {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	if ip != "" {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
		tr.DialContext = d.DialContext
	}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

// CPU returns the CPU time (user and system, in seconds) process pid has used
// ("self": this one), from /proc/<pid>/stat.
func CPU(pid string) (float64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')') // the command may hold spaces
	if i < 0 || i+2 > len(b) {
		return 0, fmt.Errorf("/proc/%s/stat: no command", pid)
	}
	f := strings.Fields(string(b[i+2:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(f))
	}
	utime, err1 := strconv.ParseFloat(f[11], 64) // fields 14 and 15 of the line
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%s/stat: times %q %q", pid, f[11], f[12])
	}
	return (utime + stime) / 100, nil // USER_HZ is 100 on Linux
}
