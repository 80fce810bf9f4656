// Package httpserve is the HTTP serving machinery that every face of coffer shares
// (today the hasura-storage /v1 face in api/hasura; later tus, S3, the console):
//
//   - connections: Listener, ConnContext and Conn send a response's header and body
//     in one write or with sendfile; Protocols serves HTTP/1.1 and h2c on one port;
//     RefuseUserinfo refuses request targets with userinfo in front of every face;
//     DebugServer is the pprof server of a listener of its own;
//   - requests: Frame is the per-request skeleton a face serves its routes in (a
//     RouteMux's): it makes each request's State (its context: id, logger, principal
//     slot, Writer, Body) and runs the face's hook before routing. IDs makes request
//     ids, Body counts request bytes under an idle read deadline, Writer records
//     status and size, sets the write deadline (AllowWrite extends it by a response's
//     size) and sends Server-Timing, WriteFrom writes bodies without copies where it
//     can, and Ending.Finish ends a request (panic recovery, metrics, AccessLog);
//   - content: ApplyRange reads Range headers by RFC 9110 before http.ServeContent,
//     NormalizeDates and AppendHTTPDate handle its conditional dates;
//   - answers: a Plan is one answer (status, header fields in order, body) that a
//     face computes once; Plan.Serve writes it through net/http (ServeContent for a
//     200 of known size) and Frame.SendPlan on the HTTP/1.1 fast path (FastServer,
//     FastWriter), so the two paths cannot drift;
//   - errors: ErrorWriter answers the plain-text errors of handlers a face does not
//     write (http.ServeContent, a ServeMux) with the face's own ErrorEncoder;
//     ClientFault tells a client that left (499) or stalled (408) from a failure;
//     StatusOf is the one table from domain error kinds to HTTP statuses.
//
// It knows no face: no authentication, no credentials and no face's JSON or error
// body. A face that needs one of those passes it in (an ErrorEncoder) or wraps what
// this package returns. deps_test.go fails if it imports a face, auth or service.
package httpserve
