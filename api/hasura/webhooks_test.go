package hasura_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/webhook"
	"github.com/coffer/coffer/webhook/payload"
)

// stubResolver answers the webhook guard's lookups from a table, and NXDOMAIN for
// any other name: tests never ask the system resolver.
type stubResolver map[string][]netip.Addr

func (s stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		return a, nil
	}
	if host == "timeout.test" {
		return nil, &net.DNSError{Err: "i/o timeout (stub)", Name: host, IsTimeout: true}
	}
	return nil, &net.DNSError{Err: "no such host (stub)", Name: host, IsNotFound: true}
}

// testResolver is the env's webhook resolver: hooks.test is loopback (allowed in
// tests), private.test a private address, metadata.google.internal the metadata
// service's address, as a cloud's DNS answers.
var testResolver = stubResolver{
	"hooks.test":               {netip.MustParseAddr("127.0.0.1")},
	"private.test":             {netip.MustParseAddr("10.0.0.5")},
	"metadata.google.internal": {netip.MustParseAddr("169.254.169.254")},
}

type hookReceiver struct {
	mu     sync.Mutex
	events []payload.Event
	secret string
	fail   bool
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if webhook.Verify(h.secret, r.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute) != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev payload.Event
	_ = json.Unmarshal(body, &ev)
	h.events = append(h.events, ev)
	if h.fail {
		w.WriteHeader(http.StatusInternalServerError)
	}
}

// types lists the events received, ordered by their time (deliveries run
// concurrently and arrive in any order).
func (h *hookReceiver) types() []string {
	h.mu.Lock()
	evs := append([]payload.Event(nil), h.events...)
	h.mu.Unlock()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Time.Before(evs[j].Time) })
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Type)+" "+ev.Actor.Role)
	}
	return out
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWebhookTargetNames (D9): a target whose host does not resolve is 400, one
// that cannot be resolved now 503, one resolving to a refused address 403, and a
// cloud metadata service's name 403 whatever it resolves to; a name resolving to an
// allowed address is accepted. Before the fix the first two and the metadata
// names answered 201 (names were not resolved at creation).
func TestWebhookTargetNames(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: true})
	for url, want := range map[string]int{
		"http://127.0.0.1.nip.io/":             http.StatusBadRequest, // not in the stub: NXDOMAIN
		"http://nowhere.test/":                 http.StatusBadRequest,
		"http://timeout.test/":                 http.StatusServiceUnavailable,
		"http://private.test/":                 http.StatusForbidden,
		"http://metadata.google.internal/x":    http.StatusForbidden,
		"http://METADATA.GOOGLE.INTERNAL./x":   http.StatusForbidden,
		"http://metadata/computeMetadata/v1/":  http.StatusForbidden,
		"http://metadata.goog/":                http.StatusForbidden,
		"http://instance-data/latest":          http.StatusForbidden,
		"http://instance-data.ec2.internal/":   http.StatusForbidden,
		"https://metadata.tencentyun.com/meta": http.StatusForbidden,
		"http://hooks.test:8080/in":            http.StatusCreated,
	} {
		body := strings.NewReader(`{"url":"` + url + `"}`)
		if want == http.StatusCreated {
			mustStatus(t, e.do("POST", "/v1/webhooks", body, true), want, nil)
			continue
		}
		mustError(t, e.do("POST", "/v1/webhooks", body, true), want)
	}
}

func TestWebhookRoutesAndEvents(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: true})
	rcv := &hookReceiver{}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)

	mustError(t, e.do("POST", "/v1/webhooks", strings.NewReader(`{"url":"`+srv.URL+`"}`), false), http.StatusUnauthorized)
	for body, want := range map[string]int{
		`{"url":"http://169.254.169.254/latest"}`:                                 http.StatusForbidden,
		`{"url":"http://10.1.2.3/"}`:                                              http.StatusForbidden,
		`{"url":"http://2130706433/"}`:                                            http.StatusForbidden,
		`{"url":"ftp://example.com/"}`:                                            http.StatusBadRequest,
		`{"url":"` + srv.URL + `","events":["file.exploded"]}`:                    http.StatusBadRequest,
		`{"url":"` + srv.URL + `","secret":"short"}`:                              http.StatusBadRequest,
		`{"url":"` + srv.URL + `","secret":"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"}`: http.StatusBadRequest,
		`{"url":"` + srv.URL + `","bucketId":"../x"}`:                             http.StatusBadRequest,
		`{"url":"` + srv.URL + `","surprise":1}`:                                  http.StatusBadRequest,
	} {
		mustError(t, e.do("POST", "/v1/webhooks", strings.NewReader(body), true), want)
	}
	var sub hasura.Subscription
	mustStatus(t, e.do("POST", "/v1/webhooks", strings.NewReader(`{"url":"`+srv.URL+`/hook"}`), true), http.StatusCreated, &sub)
	if !strings.HasPrefix(sub.Secret, "whsec_") || sub.ID == "" || len(sub.Events) != 0 {
		t.Fatalf("created %+v", sub)
	}
	rcv.mu.Lock()
	rcv.secret = sub.Secret
	rcv.mu.Unlock()
	var list struct{ Webhooks []hasura.Subscription }
	mustStatus(t, e.do("GET", "/v1/webhooks", nil, true), http.StatusOK, &list)
	if len(list.Webhooks) != 1 || list.Webhooks[0].Secret != "" || list.Webhooks[0].URL != srv.URL+"/hook" {
		t.Fatalf("list %+v", list)
	}

	changeEverything(t, e)
	want := []string{"bucket.created admin", "file.created admin", "file.replaced admin",
		"file.metadata_updated admin", "file.deleted admin", "bucket.deleted admin"}
	waitUntil(t, "6 events", func() bool { return len(rcv.types()) >= len(want) })
	time.Sleep(50 * time.Millisecond)
	if got := rcv.types(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("events %v, want %v", got, want)
	}
	checkDeliveryLog(t, e, sub.ID, rcv, len(want))
}

// changeEverything makes one change of every kind through the API, plus some that fail.
func changeEverything(t *testing.T, e *env) {
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"hooked","maxUploadFileSize":100}`), true), http.StatusCreated, nil)
	f := e.uploadOne("hooked", "a.txt", []byte("one"))
	mustError(t, e.upload(true, part{field: "bucket-id", body: []byte("hooked")},
		part{field: "file[]", filename: "big", body: content(500)}), http.StatusRequestEntityTooLarge)
	body, ctype := multipartBody(part{field: "file", filename: "x", body: []byte("two")})
	mustStatus(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusOK, nil)
	mustStatus(t, e.do("PATCH", "/v1/files/"+f.ID+"/metadata", strings.NewReader(`{"metadata":{"k":1}}`), true), http.StatusOK, nil)
	mustError(t, e.do("DELETE", "/v1/files/"+f.ID, nil, false), http.StatusForbidden)
	mustStatus(t, e.do("DELETE", "/v1/files/"+f.ID, nil, true), http.StatusNoContent, nil)
	mustStatus(t, e.do("DELETE", "/v1/buckets/hooked", nil, true), http.StatusNoContent, nil)
}

func checkDeliveryLog(t *testing.T, e *env, subID string, rcv *hookReceiver, n int) {
	var log struct{ Deliveries []hasura.Delivery }
	mustStatus(t, e.do("GET", "/v1/webhooks/"+subID+"/deliveries?state=delivered", nil, true), http.StatusOK, &log)
	if len(log.Deliveries) != n || log.Deliveries[0].EventType != coffer.BucketDeleted || log.Deliveries[0].LastStatus != 200 {
		t.Fatalf("delivery log %+v", log.Deliveries)
	}
	mustError(t, e.do("GET", "/v1/webhooks/"+subID+"/deliveries?state=lost", nil, true), http.StatusBadRequest)
	mustError(t, e.do("GET", "/v1/webhooks/"+subID+"/deliveries?limit=0", nil, true), http.StatusBadRequest)
	mustError(t, e.do("GET", "/v1/webhooks/nope/deliveries", nil, true), http.StatusNotFound)
	id := log.Deliveries[0].ID
	mustStatus(t, e.do("POST", "/v1/webhooks/"+subID+"/deliveries/"+itoa(id)+"/redeliver", nil, true), http.StatusAccepted, nil)
	waitUntil(t, "redelivery", func() bool { return len(rcv.types()) == n+1 })
	mustError(t, e.do("POST", "/v1/webhooks/"+subID+"/deliveries/x/redeliver", nil, true), http.StatusNotFound)
	mustError(t, e.do("POST", "/v1/webhooks/"+subID+"/deliveries/999999/redeliver", nil, true), http.StatusNotFound)
	mustStatus(t, e.do("DELETE", "/v1/webhooks/"+subID, nil, true), http.StatusNoContent, nil)
	mustError(t, e.do("GET", "/v1/webhooks/"+subID, nil, true), http.StatusNotFound)
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestWebhookRetriesThenDeadLetter(t *testing.T) {
	e := newEnv(t, envOptions{webhooks: true})
	rcv := &hookReceiver{secret: "a-secret-of-sixteen+", fail: true}
	srv := httptest.NewServer(rcv)
	t.Cleanup(srv.Close)
	var sub hasura.Subscription
	mustStatus(t, e.do("POST", "/v1/webhooks", strings.NewReader(
		`{"url":"`+srv.URL+`","secret":"a-secret-of-sixteen+","events":["file.created"]}`), true), http.StatusCreated, &sub)
	e.uploadOne("default", "x.txt", []byte("x"))
	var log struct{ Deliveries []hasura.Delivery }
	waitUntil(t, "dead letter", func() bool {
		mustStatus(t, e.do("GET", "/v1/webhooks/"+sub.ID+"/deliveries?state=dead", nil, true), http.StatusOK, &log)
		return len(log.Deliveries) == 1
	})
	if d := log.Deliveries[0]; d.Attempts != webhook.DefaultConfig().MaxAttempts || d.LastStatus != 500 {
		t.Fatalf("dead delivery %+v", d)
	}
}

// A service without webhooks (the server always has them, over a store with an
// outbox) answers 501 to their administration.
func TestWebhooksOffAnswer501(t *testing.T) {
	ctx, dir := context.Background(), t.TempDir()
	m, err := sqlite.Open(ctx, filepath.Join(dir, "coffer.db"))
	if err == nil {
		err = m.Migrate(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d, err := fsblob.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.DefaultConfig(), m, blob.New(d), service.Caches{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	acfg := auth.DefaultConfig()
	acfg.AdminSecret = adminSecret
	authn, err := auth.New(acfg)
	if err != nil {
		t.Fatal(err)
	}
	h, err := hasura.New(hasura.DefaultConfig(), svc, authn, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	e := &env{t: t, srv: &testServer{URL: srv.URL, client: srv.Client()}}
	mustError(t, e.do("GET", "/v1/webhooks", nil, true), http.StatusNotImplemented)
	mustError(t, e.do("GET", "/v1/webhooks", nil, false), http.StatusUnauthorized)
}
