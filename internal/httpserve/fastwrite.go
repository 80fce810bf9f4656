package httpserve

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// FastWriter writes a fast-path answer: the status line and header fields go into one
// buffer, kept by the connection (no header map, no sorting), and leave with the
// first body bytes: in one writev for a body in memory, ahead of sendfile (MSG_MORE)
// for a file. Date, Content-Length and, when the connection ends, Connection: close
// are added as net/http adds them.
//
// A face writes with it only through a Plan (Frame.SendPlan): its writing methods
// are this package's, so that no face renders a fast answer of its own beside the
// one net/http writes (Plan.Serve).
type FastWriter struct {
	conn    *Conn
	buf     []byte
	close   bool         // the connection ends after this answer
	closing *atomic.Bool // the server is shutting down: every answer ends its connection
	dateSec int64        // the second date holds
	date    []byte
	body    io.LimitedReader
	Status  int   // the status written; 0 until send
	Bytes   int64 // body bytes sent
	err     error // the connection failed: it ends after this answer
}

// reset readies w for the answer to req.
func (w *FastWriter) reset(req *FastRequest) {
	w.buf, w.close, w.Status, w.Bytes, w.err = w.buf[:0], req.Close, 0, 0, nil
	if sec := req.Start.Unix(); sec != w.dateSec || w.date == nil {
		w.dateSec, w.date = sec, AppendHTTPDate(w.date[:0], req.Start)
	}
}

// header starts the answer with its status line.
func (w *FastWriter) header(status int) {
	w.Status = status
	w.buf = append(w.buf, "HTTP/1.1 "...)
	w.buf = strconv.AppendInt(w.buf, int64(status), 10)
	w.buf = append(append(append(w.buf, ' '), http.StatusText(status)...), "\r\n"...)
}

// add adds a header field. As net/http does, CR and LF in value become spaces, then
// spaces and tabs around it are dropped, so no value can end the header early.
func (w *FastWriter) add(name, value string) {
	w.buf = append(append(w.buf, name...), ": "...)
	if strings.ContainsAny(value, "\r\n") {
		value = newlinesToSpaces.Replace(value)
	}
	w.buf = append(append(w.buf, trimOWS(value)...), "\r\n"...)
}

// addDate adds a header field whose value is t as an HTTP date.
func (w *FastWriter) addDate(name string, t time.Time) {
	w.buf = append(append(w.buf, name...), ": "...)
	w.buf = append(AppendHTTPDate(w.buf, t), "\r\n"...)
}

// newlinesToSpaces is what add does to CR and LF in a value.
var newlinesToSpaces = strings.NewReplacer("\r", " ", "\n", " ")

// trimOWS drops spaces and tabs around s.
func trimOWS(s string) string { return strings.Trim(s, " \t") }

// errShortBody is a body that ended before the size its answer announced.
var errShortBody = errors.New("httpserve: body shorter than its Content-Length")

// send ends the header with Content-Length size and sends it and, unless head (a
// HEAD request's answer), size bytes of body, all within writeTimeout (rounded up to
// a whole second). A size of -1 is an answer without a body or Content-Length (304).
// An error means the connection failed and ends.
func (w *FastWriter) send(body io.Reader, size int64, head bool, writeTimeout time.Duration) error {
	if size >= 0 {
		w.buf = append(strconv.AppendInt(append(w.buf, "Content-Length: "...), size, 10), "\r\n"...)
	}
	w.buf = append(append(append(w.buf, "Date: "...), w.date...), "\r\n"...)
	if w.close = w.close || w.closing.Load(); w.close {
		w.buf = append(w.buf, "Connection: close\r\n"...)
	}
	w.buf = append(w.buf, "\r\n"...)
	if writeTimeout > 0 {
		_ = w.conn.SetWriteDeadline(roundUp(time.Now().Add(writeTimeout)))
	}
	if head || size <= 0 {
		_, w.err = w.conn.Write(w.buf)
		return w.err
	}
	w.Bytes, w.err = w.sendBody(body, size)
	if w.err == nil && w.Bytes < size {
		w.err = errShortBody
	}
	return w.err
}

// sendBody sends the header held with the first body bytes, and size bytes of body.
func (w *FastWriter) sendBody(body io.Reader, size int64) (int64, error) {
	c := w.conn
	c.hold()
	if _, err := c.Write(w.buf); err != nil {
		return 0, err
	}
	w.body = io.LimitedReader{R: body, N: size}
	var n int64
	var err error
	switch src := sourceOf(&w.body); {
	case src.mem != nil:
		var m int
		m, err = c.Write(src.mem.NextBytes(size))
		n = int64(m)
	case src.file, src.sendfile:
		n, err = c.ReadFrom(&w.body)
	default:
		if err = c.release(); err == nil {
			buf := copyBufs.Get().(*[]byte)
			n, err = io.CopyBuffer(writerOnly{c}, &w.body, *buf)
			copyBufs.Put(buf)
		}
	}
	if rerr := c.release(); err == nil {
		err = rerr
	}
	w.body.R = nil
	return n, err
}

// NoneMatch reports whether an If-None-Match value lets a representation with etag
// be sent (true) or asks for 304 Not Modified (false): http.ServeContent's test (weak
// comparison, "*", lists), so that both paths answer alike.
func NoneMatch(inm []byte, etag string) bool {
	buf := string(inm)
	for {
		buf = trimOWS(buf)
		switch {
		case buf == "":
			return true
		case buf[0] == ',':
			buf = buf[1:]
			continue
		case buf[0] == '*':
			return false
		}
		tag, rest := scanETag(buf)
		if tag == "" {
			return true
		}
		if strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/") {
			return false
		}
		buf = rest
	}
}

// scanETag splits the entity tag at the start of s (W/"x" or "x") from the rest; ""
// if s does not start with one. It is net/http's.
func scanETag(s string) (etag, rest string) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s[start:]) < 2 || s[start] != '"' {
		return "", ""
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0x21 || c >= 0x23 && c <= 0x7E || c >= 0x80:
		case c == '"':
			return s[:i+1], s[i+1:]
		default:
			return "", ""
		}
	}
	return "", ""
}
