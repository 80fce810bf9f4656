// Package httpserve is the HTTP serving machinery that every face of coffer shares
// (today the hasura-storage /v1 face in httpapi; later tus, S3, the console): a
// listener whose connections send a response's header and body in one write or with
// sendfile (Listener, ConnContext, Conn), the protocols served on one port
// (Protocols), and for content served with http.ServeContent the reading of Range
// headers by RFC 9110 (ApplyRange) and of conditional dates (NormalizeDates,
// AppendHTTPDate), and an error writer that answers plain-text errors of handlers a
// face does not write (http.ServeContent, a ServeMux) with the face's own encoder
// (ErrorWriter, ErrorEncoder), the response writer that records status and size,
// sets the write deadline and sends Server-Timing (Writer), the end of a request:
// panic recovery, metrics and access log (Ending.Finish), request ids (IDs),
// request bodies with idle deadlines
// (Body), response bodies written without copies where it can (WriteFrom), and the
// access log with its read budget (AccessLog).
//
// It knows no face: no authentication, no credentials and no face's JSON or error
// body. A face that needs one of those passes it in (an error encoder, a hook) or
// wraps what this package returns. deps_test.go fails if it imports a face, auth or
// service.
package httpserve
