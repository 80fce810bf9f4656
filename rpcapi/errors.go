package rpcapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/coffer/coffer"
)

// codeOf is the one table from domain error codes to Connect (and gRPC) codes, the
// RPC counterpart of httpserve's status table. Every code has a row
// (TestCodeOfEveryKind reads errors.go to check it).
var codeOf = map[string]connect.Code{
	coffer.EINVALID:        connect.CodeInvalidArgument,
	coffer.EUNAUTHORIZED:   connect.CodeUnauthenticated,
	coffer.EFORBIDDEN:      connect.CodePermissionDenied,
	coffer.ENOTFOUND:       connect.CodeNotFound,
	coffer.ECONFLICT:       connect.CodeAlreadyExists,
	coffer.EPRECONDITION:   connect.CodeFailedPrecondition,
	coffer.ETOOLARGE:       connect.CodeResourceExhausted,
	coffer.EUNSUPPORTED:    connect.CodeInvalidArgument,
	coffer.ERANGE:          connect.CodeOutOfRange,
	coffer.EINTERNAL:       connect.CodeInternal,
	coffer.ENOTIMPLEMENTED: connect.CodeUnimplemented,
	coffer.EUNAVAILABLE:    connect.CodeUnavailable,
	coffer.ETOOMANY:        connect.CodeResourceExhausted,
	coffer.EQUOTA:          connect.CodeResourceExhausted,
	coffer.EINUSE:          connect.CodeFailedPrecondition,
	coffer.EABORTED:        connect.CodeAborted,
}

// CodeOf returns the Connect code for err: CodeInternal for an unknown kind.
func CodeOf(err error) connect.Code {
	if c, ok := codeOf[coffer.ErrorCode(err)]; ok {
		return c
	}
	return connect.CodeInternal
}

// toConnect returns err as a Connect error with its client-safe message. Internal
// errors are logged here, once, and shown as "internal error"; an error that names
// its field carries a google.rpc.BadRequest detail with that field.
func (h *Handler) toConnect(ctx context.Context, err error) error {
	code := CodeOf(err)
	if code == connect.CodeInternal {
		h.log.ErrorContext(ctx, "rpc: internal error", "err", err)
	}
	ce := connect.NewError(code, errors.New(coffer.ErrorMessage(err)))
	if field := coffer.ErrorField(err); field != "" {
		br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: field, Description: coffer.ErrorMessage(err)}}}
		if d, derr := connect.NewErrorDetail(br); derr == nil {
			ce.AddDetail(d)
		}
	}
	return ce
}

// statusCodes are the Connect codes of the HTTP statuses the Frame answers itself
// (a path under a claimed prefix that no route has, a panic outside a method).
var statusCodes = map[int]connect.Code{
	http.StatusNotFound: connect.CodeUnimplemented, http.StatusMethodNotAllowed: connect.CodeUnimplemented,
	http.StatusRequestTimeout: connect.CodeDeadlineExceeded,
}

// encodeError is the Frame's error body: the Connect protocol's JSON error, which
// Connect and gRPC-Web clients read from a non-200 answer.
func encodeError(w http.ResponseWriter, status int, msg string) {
	code, ok := statusCodes[status]
	if !ok {
		code = connect.CodeInternal
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"code": code.String(), "message": msg})
	_, _ = w.Write(b)
}

// refusals writes a refusal in the protocol of the call: gRPC's trailers, gRPC-Web's
// trailers-only answer, a Connect stream's end message, or Connect's unary JSON
// (also for a request in no RPC protocol). It holds no state of its own.
var refusals = connect.NewErrorWriter()

// Refuse implements api.Refuser: a call refused in front of the faces (the tenant
// router's unknown host, suspended tenant, rate limit) is answered with err's code
// in the call's own protocol (Refusal).
func (h *Handler) Refuse(w http.ResponseWriter, r *http.Request, err error) { Refusal(w, r, err) }

// Refusal answers r with err, a client-safe coffer error, as Refuse does, for a
// caller without a Handler (a face built on its first call). Headers already set on
// w (Retry-After) are kept.
func Refusal(w http.ResponseWriter, r *http.Request, err error) {
	_ = refusals.Write(w, r, connect.NewError(CodeOf(err), errors.New(coffer.ErrorMessage(err))))
}
