package hasura

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/service"
)

// ErrorBody is the JSON shape of every error response (hasura-storage's): data is
// null, as there for every error but a virus (errorData).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the "error" object of an error response.
type ErrorDetail struct {
	Data    json.RawMessage `json:"data"`
	Message string          `json:"message"`
}

// uploadErrorBody is the shape of a failed upload's answer: hasura-storage adds the
// files processed before the failure, which for coffer's all-or-nothing uploads is
// always none: [], or null (nil) when the bucket was not found, as hasura-storage's
// UploadFiles answers a failed bucket lookup (its upload returns a nil list then).
type uploadErrorBody struct {
	Error          ErrorDetail `json:"error"`
	ProcessedFiles []any       `json:"processedFiles"`
}

// writeError answers err as JSON. Internal errors are logged with the request id and
// shown as "internal error".
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := errorAnswer(r, err)
	writeErrorData(w, status, msg, errorData(err))
}

// errorData is the "data" of err's answer: null, but for a virus the file's name and
// the signature, as hasura-storage's scanAndReportVirus sets them.
func errorData(err error) json.RawMessage {
	var v *service.VirusFound
	if !errors.As(err, &v) {
		return nullJSON
	}
	b, _ := json.Marshal(struct {
		File  string `json:"file"`
		Virus string `json:"virus"`
	}{v.Name, v.Signature})
	return b
}

// errorAnswer returns the status and client-safe message for err, logging internal
// errors once.
func errorAnswer(r *http.Request, err error) (int, string) {
	if status, msg, ok := clientFault(r, err); ok {
		return status, msg
	}
	status := httpserve.StatusOf(err)
	msg := message(err)
	// A full image queue is load shedding and a quota the client's upload would pass
	// is the client's error (507): the service warns about both, rate-limited.
	if status >= 500 && !errors.Is(err, imaging.ErrBusy) && coffer.ErrorCode(err) != coffer.EQUOTA {
		logger(r).Error("request failed", "err", err)
		if status == http.StatusInternalServerError {
			msg = "internal error (request id " + requestID(r) + ")"
		}
	}
	return status, msg
}

// clientFault recognises a request that failed because of its client's connection
// (httpserve.ClientFault), logging a closed one at debug.
func clientFault(r *http.Request, err error) (int, string, bool) {
	var bodyErr error
	if st := httpserve.StateOf(r); st != nil {
		bodyErr = st.Body.Err
	}
	status, msg, ok := httpserve.ClientFault(r, bodyErr, err)
	if status == httpserve.StatusClientClosed {
		logger(r).Debug("client closed request", "err", err, "body_err", bodyErr)
	}
	return status, msg, ok
}

// writeUploadError answers a failed upload in hasura-storage's shape. Its 403 and 404
// carry no X-Error: hasura-storage answers the failures of its upload step (the bucket
// lookup, permissions, the virus scan) with UploadFilesdefaultJSONResponse, which
// sets none; coffer keeps X-Error on its other failed uploads (400, 413, 415, 5xx).
func writeUploadError(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := errorAnswer(r, err)
	body := uploadErrorBody{Error: ErrorDetail{Data: errorData(err), Message: msg}, ProcessedFiles: []any{}}
	if coffer.ErrorCode(err) == coffer.ENOTFOUND { // an upload's only 404: the bucket
		body.ProcessedFiles = nil
	}
	if status != http.StatusForbidden && status != http.StatusNotFound {
		w.Header().Set("X-Error", sanitizeHeader(msg))
	}
	writeJSON(w, status, body)
}

var nullJSON = json.RawMessage("null")

// writeErrorStatus answers status with msg and null data: the face's
// httpserve.ErrorEncoder.
func writeErrorStatus(w http.ResponseWriter, status int, msg string) {
	writeErrorData(w, status, msg, nullJSON)
}

func writeErrorData(w http.ResponseWriter, status int, msg string, data json.RawMessage) {
	h := w.Header()
	for _, k := range []string{"Etag", "Last-Modified", "Cache-Control", "Content-Disposition", "Content-Encoding", "Accept-Ranges"} {
		h.Del(k)
	}
	if status != http.StatusRequestedRangeNotSatisfiable {
		h.Del("Content-Range")
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Error", sanitizeHeader(msg))
	body := ErrorBody{Error: ErrorDetail{Data: data, Message: msg}}
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

// Refuse implements api.Refuser: a request refused in front of the faces (the tenant
// router's unknown host, suspended tenant, rate limit) gets this face's error body.
func (h *Handler) Refuse(w http.ResponseWriter, r *http.Request, err error) {
	writeErrorStatus(headOf(w, r), httpserve.StatusOf(err), coffer.ErrorMessage(err))
}

// headOf returns the writer to answer r with: w, or for a HEAD request w wrapped in
// headErrors.
func headOf(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if r.Method != http.MethodHead {
		return w
	}
	return &headErrors{ResponseWriter: w}
}

// headErrors answers a HEAD request's errors (status >= 400) as hasura-storage does
// (GetFileMetadataHeadersdefaultResponse): the status and X-Error, without the
// Content-Length and Content-Type of the body HEAD does not send. It drops them when
// the status is written and discards the body after it, which net/http would
// otherwise measure and sniff to add them back. Other answers pass through.
type headErrors struct {
	http.ResponseWriter
	bare bool // an error status is written: no body follows
}

func (h *headErrors) WriteHeader(code int) {
	if code >= 400 && !h.bare {
		h.bare = true
		hd := h.Header()
		hd.Del("Content-Length")
		hd.Del("Content-Type")
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headErrors) Write(p []byte) (int, error) {
	if h.bare {
		return len(p), nil
	}
	return h.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (h *headErrors) Unwrap() http.ResponseWriter { return h.ResponseWriter }
