package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// statusOf is the one table from domain error codes to HTTP statuses.
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
}

// StatusOf returns the HTTP status for err.
func StatusOf(err error) int {
	if s, ok := statusOf[coffer.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON shape of every error response (hasura-storage's).
type ErrorBody struct {
	Error struct {
		Message string `json:"message"`
	} `json:"error"`
}

// writeError answers err as JSON. Internal errors are logged with the request id and
// shown as "internal error".
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	msg := coffer.ErrorMessage(err)
	if status >= 500 && !errors.Is(err, imaging.ErrBusy) { // a full image queue is load shedding: the service warns, rate-limited
		logger(r).Error("request failed", "err", err)
		if status == http.StatusInternalServerError {
			msg = "internal error (request id " + requestID(r) + ")"
		}
	}
	writeErrorStatus(w, status, msg)
}

func writeErrorStatus(w http.ResponseWriter, status int, msg string) {
	h := w.Header()
	for _, k := range []string{"Etag", "Last-Modified", "Cache-Control", "Content-Disposition", "Content-Encoding", "Accept-Ranges"} {
		h.Del(k)
	}
	if status != http.StatusRequestedRangeNotSatisfiable {
		h.Del("Content-Range")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Error", sanitizeHeader(msg))
	var body ErrorBody
	body.Error.Message = msg
	b, _ := json.Marshal(body)
	h.Set("Content-Length", itoa(len(b)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // URLs keep their '&'
	if err := enc.Encode(v); err != nil {
		slog.Error("json encode", "err", err)
		writeErrorStatus(w, http.StatusInternalServerError, "internal error")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// sanitizeHeader keeps a message safe for a header value.
func sanitizeHeader(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			b[i] = ' '
		}
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
