package httpserve

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/coffer/coffer"
)

// ErrorEncoder writes a face's error response: the status and the face's own body
// for msg, a message safe to show the client. Each face has its own shape (the hasura
// face's JSON; an S3 face's XML): this package writes none of a face's
// (PlainText is for what answers as web servers do: the console's page, sites).
type ErrorEncoder func(w http.ResponseWriter, status int, msg string)

// PlainText is the ErrorEncoder of short plain-text errors, as web servers write
// them.
func PlainText(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(msg + "\n"))
}

// ErrorWriter is the http.ResponseWriter to hand a handler that answers errors in
// plain text and is not the face's own (http.ServeContent's 416, a ServeMux's 404 and
// 405): the first error status (>= 400) is answered by Encode instead, and what the
// handler writes after it is discarded. Other statuses and bodies pass through, and
// ReadFrom keeps sendfile reachable. The zero value is not usable: set
// ResponseWriter and Encode.
type ErrorWriter struct {
	http.ResponseWriter
	Encode ErrorEncoder
	done   bool // the answer is written: the handler's own body is discarded
}

// WriteHeader answers an error status with Encode, once; any other status is
// written as is.
func (e *ErrorWriter) WriteHeader(code int) {
	if code >= 400 && !e.done {
		e.done = true
		e.Encode(e.ResponseWriter, code, statusMessage(code))
		return
	}
	e.ResponseWriter.WriteHeader(code)
}

// Answer writes code with the header as it stands and discards the handler's body:
// for a face that answers a status with no body (the hasura face's 412).
func (e *ErrorWriter) Answer(code int) {
	e.done = true
	e.ResponseWriter.WriteHeader(code)
}

// Answered reports whether the answer has been written by Encode or Answer.
func (e *ErrorWriter) Answered() bool { return e.done }

// Write writes p, or discards it after an answer.
func (e *ErrorWriter) Write(p []byte) (int, error) {
	if e.done {
		return len(p), nil
	}
	return e.ResponseWriter.Write(p)
}

// ReadFrom keeps sendfile reachable through the wrapper.
func (e *ErrorWriter) ReadFrom(r io.Reader) (int64, error) {
	if e.done {
		return io.Copy(io.Discard, r)
	}
	if rf, ok := e.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{e.ResponseWriter}, r)
}

// writerOnly hides a writer's ReadFrom, so that io.Copy does not call it again.
type writerOnly struct{ io.Writer }

// statusMessage is the message for an error status that a handler answered in plain
// text.
func statusMessage(code int) string {
	if code == http.StatusRequestedRangeNotSatisfiable {
		return "requested range not satisfiable"
	}
	return http.StatusText(code)
}

// statusOf is the one table from domain error codes to HTTP statuses, for every face.
var statusOf = map[string]int{
	coffer.EINVALID:        http.StatusBadRequest,
	coffer.EUNAUTHORIZED:   http.StatusUnauthorized,
	coffer.EFORBIDDEN:      http.StatusForbidden,
	coffer.ENOTFOUND:       http.StatusNotFound,
	coffer.ECONFLICT:       http.StatusConflict,
	coffer.EPRECONDITION:   http.StatusPreconditionFailed,
	coffer.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	coffer.EUNSUPPORTED:    http.StatusUnsupportedMediaType,
	coffer.ERANGE:          http.StatusRequestedRangeNotSatisfiable,
	coffer.EINTERNAL:       http.StatusInternalServerError,
	coffer.ENOTIMPLEMENTED: http.StatusNotImplemented,
	coffer.EUNAVAILABLE:    http.StatusServiceUnavailable,
	coffer.ETOOMANY:        http.StatusTooManyRequests,
	coffer.EQUOTA:          http.StatusInsufficientStorage,
	coffer.EINUSE:          http.StatusConflict,
	coffer.EABORTED:        http.StatusConflict,
}

// StatusOf returns the HTTP status for err.
func StatusOf(err error) int {
	if s, ok := statusOf[coffer.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// StatusClientClosed is the status logged and counted for a request whose client
// left before its answer (nginx's 499 "client closed request"): not a server error.
const StatusClientClosed = 499

// ClientFault recognises a request that failed because of its client's connection,
// whatever error err the work under it returned: the client closed it (499) or
// stopped sending its body for longer than the read idle timeout (408). bodyErr is
// the request body's first read error (Body.Err).
func ClientFault(r *http.Request, bodyErr, err error) (int, string, bool) {
	var ne net.Error
	switch {
	case errors.As(bodyErr, &ne) && ne.Timeout():
		return http.StatusRequestTimeout, "the request body stopped arriving; the server gave up waiting", true
	case bodyErr != nil, r.Context().Err() != nil && errors.Is(err, context.Canceled):
		return StatusClientClosed, "client closed request", true
	}
	return 0, "", false
}
