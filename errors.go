package coffer

import (
	"errors"
	"fmt"
)

// Error codes. They cross the wire (HTTP status table in internal/httpserve, RPC codes in rpcapi):
// never rename or reuse one.
const (
	EINVALID        = "invalid"           // 400: malformed or out-of-range input
	EUNAUTHORIZED   = "unauthorized"      // 401: missing or bad credentials
	EFORBIDDEN      = "forbidden"         // 403: credentials fine, action refused
	ENOTFOUND       = "not_found"         // 404
	ECONFLICT       = "conflict"          // 409: already exists
	EPRECONDITION   = "precondition"      // 412: If-Match and friends failed
	ETOOLARGE       = "too_large"         // 413
	EUNSUPPORTED    = "unsupported_media" // 415: MIME type not allowed
	ERANGE          = "range"             // 416: unsatisfiable Range
	EINTERNAL       = "internal"          // 500: a bug or a backend failure; details are logged, not shown
	ENOTIMPLEMENTED = "not_implemented"   // 501
	EUNAVAILABLE    = "unavailable"       // 503: overloaded or shutting down
	ETOOMANY        = "too_many_requests" // 429: this client has too much work in progress; retry later
	EINUSE          = "in_use"            // 409: refused while it is in use or protected (a bucket holding files)
	EABORTED        = "aborted"           // 409: lost a race with a concurrent change; retrying may succeed
	EQUOTA          = "quota_exceeded"    // 507: the tenant's stored bytes or file count would pass its quota
)

// Error is the domain error: a code for machines and a message safe to show to clients.
type Error struct {
	Code    string
	Message string
	Err     error // cause, logged but never shown to clients
	// Field names the input field at fault, when an EINVALID error knows it: a path
	// in the input's own terms ("rules[0].read.filter", "maxUploadFileSize"), which a
	// face may report in structured form (the RPC face's BadRequest details).
	Field string
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidField returns an EINVALID *Error about field, with message msg.
func InvalidField(field, msg string) *Error {
	return &Error{Code: EINVALID, Message: msg, Field: field}
}

// ErrorField returns the Field of err's *Error, "" if it names none.
func ErrorField(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Field
	}
	return ""
}

// Internal wraps a backend failure: clients see "internal error", logs see err.
func Internal(err error, what string) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: EINTERNAL, Message: what, Err: err}
}

// ErrorCode returns the code of err: "" for nil, EINTERNAL for errors that are not *Error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of err.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Code != EINTERNAL {
		return e.Message
	}
	return "internal error"
}
