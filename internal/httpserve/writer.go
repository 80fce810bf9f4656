package httpserve

import (
	"io"
	"net/http"
	"time"

	"github.com/coffer/coffer/internal/timing"
)

// Writer is the response writer a request's handlers write to: it records the status
// and body size for the access log and metrics, sets the write deadline just before
// the first byte, and adds the Server-Timing header (Timer) just before the header
// goes out. A face embeds it in its per-request state (one allocation for both) and
// sets it up with Init.
type Writer struct {
	http.ResponseWriter
	Status int             // the status written; 0 until the header goes out
	Bytes  int64           // body bytes written
	Start  time.Time       // when the request began
	Timer  timing.Recorder // the Server-Timing entries
	conn   *Conn           // nil unless served through Listener
	// deadline is the response's write deadline, applied just before its first byte;
	// zero: writeTimeout from then. It counts from the response, not the request, so
	// that an upload whose body takes long to arrive still gets its answer.
	deadline     time.Time
	writeTimeout time.Duration
	// allow, when set (AllowWrite), replaces writeTimeout as the time the response
	// gets from its first byte, so that the deadline costs no clock read of its own.
	allow time.Duration
	// serverTiming is the Server-Timing header's value slice, here so that setting
	// the header allocates only its string.
	serverTiming [1]string
}

// Init sets s up in place for r's response through w, begun at start, to be written
// within writeTimeout of its first byte (0: no limit) unless SetDeadline says
// otherwise.
func (s *Writer) Init(w http.ResponseWriter, r *http.Request, start time.Time, writeTimeout time.Duration) {
	*s = Writer{ResponseWriter: w, Start: start, conn: ConnOf(r), writeTimeout: writeTimeout}
}

// headers runs once, before the first byte of the response.
func (s *Writer) headers(code int) {
	if s.Status != 0 {
		return
	}
	s.Status = code
	now := time.Now()
	switch {
	case !s.deadline.IsZero():
	case s.allow > 0:
		s.deadline = now.Add(s.allow)
	case s.writeTimeout > 0:
		s.deadline = now.Add(s.writeTimeout)
	}
	s.ApplyDeadline()
	s.Timer.Add("app", now.Sub(s.Start), "")
	s.serverTiming[0] = s.Timer.Header()
	s.ResponseWriter.Header()["Server-Timing"] = s.serverTiming[:]
}

// ApplyDeadline sets the write deadline on the connection: once per response, when
// the first byte is about to go out (a deadline only matters to writes), or when the
// handler wrote nothing and net/http answers for it.
func (s *Writer) ApplyDeadline() {
	if d, ok := s.ResponseWriter.(interface{ SetWriteDeadline(time.Time) error }); ok {
		_ = d.SetWriteDeadline(s.deadline)
		return
	}
	_ = http.NewResponseController(s.ResponseWriter).SetWriteDeadline(s.deadline)
}

// Allow gives the response d to be written from its first byte (from now if it is
// already being written), unless SetDeadline set a time.
func (s *Writer) Allow(d time.Duration) {
	if s.Status != 0 {
		s.SetDeadline(time.Now().Add(d))
		return
	}
	s.deadline, s.allow = time.Time{}, d
}

// SetDeadline sets the time by which the response must be written.
func (s *Writer) SetDeadline(t time.Time) {
	s.deadline, s.allow = t, 0
	if s.Status != 0 { // already writing
		s.ApplyDeadline()
	}
}

// WriteHeader writes the header, with Server-Timing, under the write deadline.
func (s *Writer) WriteHeader(code int) {
	if code >= 100 && code < 200 { // informational: the real header comes later
		s.ResponseWriter.WriteHeader(code)
		return
	}
	s.headers(code)
	s.ResponseWriter.WriteHeader(code)
}

// Write writes body bytes, and the header first if it is not out yet.
func (s *Writer) Write(p []byte) (int, error) {
	s.headers(http.StatusOK)
	n, err := s.ResponseWriter.Write(p)
	s.Bytes += int64(n)
	return n, err
}

// Flush sends the header (if it is not out yet) and what is buffered: streaming
// handlers (gRPC through connect-go, which asserts http.Flusher) need it.
func (s *Writer) Flush() {
	s.headers(http.StatusOK)
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController and sendfile (via ReadFrom) reach the real writer.
func (s *Writer) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// ReadFrom keeps sendfile working through the wrapper for files on disk, and writes
// other bodies without a copy where it can (WriteFrom).
func (s *Writer) ReadFrom(r io.Reader) (int64, error) {
	s.headers(http.StatusOK)
	n, err := WriteFrom(s.ResponseWriter, s.conn, r)
	s.Bytes += n
	return n, err
}
