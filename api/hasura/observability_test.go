package hasura_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/imaging"
)

// TestMetricsClosedByDefault (D7): /metrics on the API port answers 401 without
// credentials and 403 to a user, with no metric in the body, and serves admins
// (admin secret, admin JWT). Before the fix it answered 200 to anyone.
func TestMetricsClosedByDefault(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig})
	for _, c := range []struct {
		hdr  []string
		want int
	}{
		{nil, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer " + token(t, "user", "alice")}, http.StatusForbidden},
		{[]string{"Authorization", "Bearer not-a-jwt"}, http.StatusUnauthorized},
		{[]string{"X-Hasura-Admin-Secret", "wrong"}, http.StatusUnauthorized},
		{[]string{"X-Hasura-Admin-Secret", adminSecret}, http.StatusOK},
		{[]string{"Authorization", "Bearer " + token(t, "admin", "root")}, http.StatusOK},
	} {
		checkMetricsAnswer(t, e, c.hdr, c.want)
	}
}

// checkMetricsAnswer gets /metrics with hdr and wants status want: metrics for 200,
// none in the body of an error.
func checkMetricsAnswer(t *testing.T, e *env, hdr []string, want int) {
	t.Helper()
	body := string(mustStatus(t, e.do("GET", "/metrics", nil, false, hdr...), want, nil))
	if has := strings.Contains(body, "coffer_http_request_duration_seconds"); has != (want == http.StatusOK) {
		t.Errorf("%v: status %d, body %.200s", hdr, want, body)
	}
}

// With a metrics token, /metrics on the API port answers that bearer token, even
// when JWTs are on (the token is not a JWT), and admins; the API itself works as
// before.
func TestMetricsToken(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, metrics: hasura.Config{MetricsToken: "scrape-me"}})
	for _, c := range []struct {
		hdr  []string
		want int
	}{
		{nil, http.StatusUnauthorized},
		{[]string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{[]string{"Authorization", "Basic scrape-me"}, http.StatusUnauthorized},
		{[]string{"X-Hasura-Admin-Secret", adminSecret}, http.StatusOK},
		{[]string{"Authorization", "Bearer " + token(t, "user", "alice")}, http.StatusForbidden},
		{[]string{"Authorization", "Bearer scrape-me"}, http.StatusOK},
	} {
		checkMetricsAnswer(t, e, c.hdr, c.want)
	}
	f := e.uploadOne("default", "a.txt", []byte("hello"))
	mustStatus(t, e.do("GET", "/v1/files/"+f.ID, nil, true), http.StatusOK, nil)
	mustError(t, e.do("GET", "/v1/files/"+f.ID, nil, false, "Authorization", "Bearer scrape-me"), http.StatusUnauthorized) // not a JWT
}

// With the metrics served on a listener of their own, the API port has no /metrics
// (and still records every request for them).
func TestMetricsElsewhere(t *testing.T) {
	e := newEnv(t, envOptions{metrics: hasura.Config{MetricsElsewhere: true}})
	mustError(t, e.do("GET", "/metrics", nil, true), http.StatusNotFound)
	mustError(t, e.do("GET", "/metrics", nil, false), http.StatusNotFound)
}

// lockedBuffer is a log destination that tests read while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) count(s string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), s)
}

// A full image queue is load shedding: each refused transformation answers 503, but
// the log gets one WARN for the burst rather than an ERROR per request. Other 503s
// (an image worker that keeps failing) are still logged as errors.
func TestImageQueueFullLogsOneWarning(t *testing.T) {
	var logs lockedBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newEnv(t, envOptions{engine: refusingEngine{imaging.ErrBusy}, log: log})
	src := e.uploadOne("default", "p.jpg", photo(t, 64, 48))
	for range 5 {
		mustError(t, e.do("GET", "/v1/files/"+src.ID+"?w=10", nil, true), http.StatusServiceUnavailable)
	}
	if n := logs.count("level=ERROR"); n != 0 {
		t.Errorf("%d ERROR lines for a full queue:\n%s", n, logs.buf.String())
	}
	if n := logs.count("level=WARN msg=\"image queue full"); n != 1 {
		t.Errorf("%d warnings for 5 refusals in a burst, want 1:\n%s", n, logs.buf.String())
	}

	var logs2 lockedBuffer
	failing := &imaging.RetryLater{Err: coffer.Errorf(coffer.EUNAVAILABLE, "the image worker did not start")}
	e = newEnv(t, envOptions{engine: refusingEngine{failing}, log: slog.New(slog.NewTextHandler(&logs2, nil))})
	src = e.uploadOne("default", "p.jpg", photo(t, 64, 48))
	for range 3 {
		mustError(t, e.do("GET", "/v1/files/"+src.ID+"?w=10", nil, true), http.StatusServiceUnavailable)
	}
	if n := logs2.count("level=ERROR msg=\"request failed\""); n != 3 {
		t.Errorf("%d ERROR lines for 3 failures of the worker, want 3:\n%s", n, logs2.buf.String())
	}
}
