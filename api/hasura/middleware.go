package hasura

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/metrics"
)

// newFrame returns the per-request skeleton the face's routes run in (request ids,
// Server-Timing, deadlines, metrics, access log, panic recovery, nosniff: see
// httpserve.Frame), with hasura's authentication before routing and its JSON errors.
func (h *Handler) newFrame() *httpserve.Frame {
	f := &httpserve.Frame{Routes: emptyIDs{h.mux}, Before: h.authenticate, Encode: writeErrorStatus, IDs: httpserve.NewIDs(),
		Log: h.log, Access: httpserve.NewAccessLog(h.cfg.AccessLog, h.log), ReadIdleTimeout: h.cfg.ReadIdleTimeout,
		WriteTimeout: h.cfg.WriteTimeout, MinWriteRate: h.cfg.MinWriteRate}
	if h.cfg.Metrics != nil {
		f.Begin = h.cfg.Metrics.Begin
	}
	return f
}

// requestID returns r's request id, "" if it has none.
func requestID(r *http.Request) string {
	if st := httpserve.StateOf(r); st != nil {
		return st.ID
	}
	return ""
}

// logger returns r's logger, with its request id.
func logger(r *http.Request) *slog.Logger {
	if st := httpserve.StateOf(r); st != nil {
		return st.Logger()
	}
	return slog.Default()
}

// principal returns who makes r, as authenticate found.
func principal(r *http.Request) *coffer.Principal {
	if st := httpserve.StateOf(r); st != nil {
		return st.Principal
	}
	return nil
}

// authenticate sets st's principal, or answers the request with the error: the
// Frame's hook before routing.
func (h *Handler) authenticate(st *httpserve.State, r *http.Request) bool {
	if r.URL.Path == "/metrics" && metrics.TokenMatches(h.cfg.MetricsToken, r) {
		return true // this bearer token is the metrics token, not a JWT: serveMetrics lets it in
	}
	authStart := time.Now()
	p, err := h.authn.Principal(r)
	st.W.Timer.Add("auth", time.Since(authStart), "")
	if err != nil {
		writeError(&st.W, r, err)
		return false
	}
	st.Principal = p
	return true
}

func itoa(n int) string { return strconv.Itoa(n) }
