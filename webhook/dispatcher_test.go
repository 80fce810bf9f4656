package webhook

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/pgtest"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/webhook/payload"
)

type outboxStore interface {
	meta.Store
	meta.Outbox
}

const testSecret = "test-secret-0123456789"

// receiver is a real HTTP server on loopback that checks signatures and records events.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	events []payload.Event
	hdrs   []http.Header
	status func(n int) int // status for the n-th request (0-based)
	n      int
}

func newReceiver(t *testing.T, status func(n int) int) *receiver {
	r := &receiver{t: t, status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	if err := Verify(testSecret, req.Header.Get(SignatureHeader), body, time.Now(), 5*time.Minute); err != nil {
		r.t.Errorf("receiver: %v", err)
	}
	var ev payload.Event
	if err := json.Unmarshal(body, &ev); err != nil {
		r.t.Errorf("receiver: body %q: %v", body, err)
	}
	r.mu.Lock()
	n := r.n
	r.n++
	r.events = append(r.events, ev)
	r.hdrs = append(r.hdrs, req.Header.Clone())
	r.mu.Unlock()
	code := 204
	if r.status != nil {
		code = r.status(n)
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, "receiver says "+strconv.Itoa(code))
}

func (r *receiver) got() ([]payload.Event, []http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]payload.Event(nil), r.events...), append([]http.Header(nil), r.hdrs...)
}

func openSQLite(t *testing.T) outboxStore {
	t.Helper()
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

func openPostgres(t *testing.T, dsn string) outboxStore {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return s
}

// loopbackClient is the guard's client with loopback allowed (the receivers of these
// tests listen on 127.0.0.1).
func loopbackClient(timeout time.Duration) *http.Client {
	return NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, nil, nil).Client(timeout)
}

func fastConfig() Config {
	c := DefaultConfig()
	c.BackoffBase, c.BackoffMax, c.Poll, c.Timeout = 5*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, 2*time.Second
	return c
}

// startDispatcher runs a dispatcher until the test ends, woken by store commits.
func startDispatcher(t *testing.T, s meta.Outbox, cfg Config, client *http.Client) *Dispatcher {
	t.Helper()
	d, err := New(cfg, s, client, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.OnEvent(d.Wake)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return d
}

func subscribeTo(t *testing.T, s meta.Outbox, url, bucket string, types ...coffer.EventType) *coffer.Subscription {
	t.Helper()
	sub := &coffer.Subscription{ID: coffer.NewFileID(), BucketID: bucket, Events: types, URL: url, Secret: testSecret}
	if err := s.CreateSubscription(t.Context(), sub); err != nil {
		t.Fatal(err)
	}
	return sub
}

func upload(t *testing.T, s meta.Store, ctx context.Context, bucket, name string) *coffer.File {
	t.Helper()
	f := &coffer.File{ID: coffer.NewFileID(), BucketID: bucket, Name: name, Size: 1, MimeType: "text/plain",
		ETag: `"x"`, BlobKey: "k/" + coffer.NewFileID(), Metadata: json.RawMessage(`{}`)}
	if err := s.BeginUpload(ctx, f.BlobKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFiles(ctx, []*coffer.File{f}); err != nil {
		t.Fatal(err)
	}
	return f
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func deliveries(t *testing.T, s meta.Outbox, sub string) []*coffer.Delivery {
	t.Helper()
	ds, err := s.ListDeliveries(t.Context(), meta.DeliveryQuery{SubscriptionID: sub})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func allIn(ds []*coffer.Delivery, state string) bool {
	for _, d := range ds {
		if d.State != state {
			return false
		}
	}
	return len(ds) > 0
}

func TestDeliversEveryCommittedChangeOnce(t *testing.T) {
	s := openSQLite(t)
	rcv := newReceiver(t, nil)
	sub := subscribeTo(t, s, rcv.srv.URL+"/hook", "")
	startDispatcher(t, s, fastConfig(), loopbackClient(2*time.Second))
	ctx := coffer.WithActor(t.Context(), &coffer.Principal{Role: "user", UserID: "alice"})

	f := upload(t, s, ctx, coffer.DefaultBucketID, "a.txt")
	dup := *f // a change that does not commit: same id again
	dup.BlobKey = "k/dup"
	if err := s.BeginUpload(ctx, dup.BlobKey, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateFiles(ctx, []*coffer.File{&dup}); coffer.ErrorCode(err) != coffer.ECONFLICT {
		t.Fatalf("duplicate create: %v", err)
	}
	md := json.RawMessage(`{"k":1}`)
	if _, err := s.UpdateFile(ctx, f.ID, coffer.FileUpdate{Metadata: &md}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteFile(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 deliveries", func() bool {
		ds := deliveries(t, s, sub.ID)
		return len(ds) == 3 && allIn(ds, coffer.DeliveryDelivered)
	})
	time.Sleep(50 * time.Millisecond) // nothing else may arrive
	evs, hdrs := rcv.got()
	// Deliveries run concurrently and are not ordered; events carry their time.
	order := make([]int, len(evs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return evs[order[a]].Time.Before(evs[order[b]].Time) })
	sortedEvs, sortedHdrs := make([]payload.Event, len(evs)), make([]http.Header, len(evs))
	for i, j := range order {
		sortedEvs[i], sortedHdrs[i] = evs[j], hdrs[j]
	}
	evs, hdrs = sortedEvs, sortedHdrs
	want := []coffer.EventType{coffer.FileCreated, coffer.FileMetadataUpdated, coffer.FileDeleted}
	if len(evs) != len(want) {
		t.Fatalf("receiver got %d events, want %d: %+v", len(evs), len(want), evs)
	}
	for i, ev := range evs {
		if ev.Type != want[i] || ev.File == nil || ev.File.ID != f.ID || ev.Actor.UserID != "alice" {
			t.Errorf("event %d = %s %+v by %+v", i, ev.Type, ev.File, ev.Actor)
		}
		if hdrs[i].Get("Coffer-Event-Id") != ev.ID || hdrs[i].Get("Coffer-Event-Type") != string(ev.Type) ||
			hdrs[i].Get("Coffer-Delivery-Attempt") != "1" || hdrs[i].Get("Content-Type") != "application/json" {
			t.Errorf("event %d headers %v", i, hdrs[i])
		}
	}
	if evs[1].Before == nil || string(evs[1].File.Metadata) != `{"k":1}` {
		t.Errorf("metadata_updated: before %+v after %s", evs[1].Before, evs[1].File.Metadata)
	}
}

func TestRetriesUntilSuccess(t *testing.T) {
	s := openSQLite(t)
	rcv := newReceiver(t, func(n int) int { return map[bool]int{true: 500, false: 200}[n < 2] })
	sub := subscribeTo(t, s, rcv.srv.URL, "")
	d := startDispatcher(t, s, fastConfig(), loopbackClient(2*time.Second))
	upload(t, s, t.Context(), coffer.DefaultBucketID, "r.txt")
	waitFor(t, "delivered", func() bool { return allIn(deliveries(t, s, sub.ID), coffer.DeliveryDelivered) })
	ds := deliveries(t, s, sub.ID)
	if ds[0].Attempts != 3 || ds[0].LastStatus != 200 || ds[0].LastError != "" {
		t.Fatalf("delivery = %+v, want delivered on attempt 3", ds[0])
	}
	evs, hdrs := rcv.got()
	for i := range evs {
		if evs[i].ID != evs[0].ID || hdrs[i].Get("Coffer-Delivery-Attempt") != strconv.Itoa(i+1) {
			t.Errorf("request %d: event %s attempt %s", i, evs[i].ID, hdrs[i].Get("Coffer-Delivery-Attempt"))
		}
	}
	if d.Stats.Failed.Load() != 2 || d.Stats.Delivered.Load() != 1 {
		t.Errorf("stats failed %d delivered %d", d.Stats.Failed.Load(), d.Stats.Delivered.Load())
	}
}

func TestDeadLetterAndRedeliver(t *testing.T) {
	s := openSQLite(t)
	var mu sync.Mutex
	code := 503
	rcv := newReceiver(t, func(int) int { mu.Lock(); defer mu.Unlock(); return code })
	sub := subscribeTo(t, s, rcv.srv.URL, "")
	cfg := fastConfig()
	cfg.MaxAttempts = 3
	startDispatcher(t, s, cfg, loopbackClient(2*time.Second))
	upload(t, s, t.Context(), coffer.DefaultBucketID, "d.txt")
	waitFor(t, "dead", func() bool { return allIn(deliveries(t, s, sub.ID), coffer.DeliveryDead) })
	dl := deliveries(t, s, sub.ID)[0]
	if dl.Attempts != 3 || dl.LastStatus != 503 || dl.LastError != "HTTP 503: receiver says 503" {
		t.Fatalf("dead delivery = %+v", dl)
	}
	mu.Lock()
	code = 200
	mu.Unlock()
	if err := s.Redeliver(t.Context(), sub.ID, dl.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "redelivered", func() bool { return allIn(deliveries(t, s, sub.ID), coffer.DeliveryDelivered) })
	if evs, _ := rcv.got(); len(evs) != 4 {
		t.Fatalf("receiver got %d requests, want 3 failed + 1", len(evs))
	}
}

func TestTimeoutAndRefusedTargetAreFailures(t *testing.T) {
	s := openSQLite(t)
	// The stalling receiver listens on 127.0.0.2, the only address the guard allows;
	// the decoy on 127.0.0.1 must be refused at connect time.
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	stall := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // the server notices a client hanging up only after the body
		<-r.Context().Done()
	})}}
	stall.Start()
	t.Cleanup(stall.Close)
	decoy := newReceiver(t, nil)
	slow := subscribeTo(t, s, stall.URL, "")
	refused := subscribeTo(t, s, decoy.srv.URL, "")
	cfg := fastConfig()
	cfg.MaxAttempts, cfg.Timeout = 1, 200*time.Millisecond
	g := NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}, nil, nil)
	startDispatcher(t, s, cfg, g.Client(cfg.Timeout))
	upload(t, s, t.Context(), coffer.DefaultBucketID, "t.txt")
	waitFor(t, "both dead", func() bool {
		return allIn(deliveries(t, s, slow.ID), coffer.DeliveryDead) && allIn(deliveries(t, s, refused.ID), coffer.DeliveryDead)
	})
	if e := deliveries(t, s, slow.ID)[0].LastError; e != "timed out" {
		t.Errorf("stalled receiver: last error %q", e)
	}
	if e := deliveries(t, s, refused.ID)[0].LastError; !strings.Contains(e, "refused") {
		t.Errorf("refused target: last error %q", e)
	}
	if evs, _ := decoy.got(); len(evs) != 0 {
		t.Fatalf("the refused target received %d requests", len(evs))
	}
}

// TestNodesShareDeliveries runs two dispatchers, each with its own connection pool,
// on one PostgreSQL database (two coffer nodes): every event reaches the receiver
// exactly once.
func TestNodesShareDeliveries(t *testing.T) {
	dsn := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	a, b := openPostgres(t, dsn), openPostgres(t, dsn)
	rcv := newReceiver(t, nil)
	sub := subscribeTo(t, a, rcv.srv.URL, "")
	startDispatcher(t, a, fastConfig(), loopbackClient(2*time.Second))
	startDispatcher(t, b, fastConfig(), loopbackClient(2*time.Second))
	const n = 100
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			upload(t, []outboxStore{a, b}[i%2], t.Context(), coffer.DefaultBucketID, "n"+strconv.Itoa(i))
		}()
	}
	wg.Wait()
	waitFor(t, "all delivered", func() bool {
		ds, err := a.ListDeliveries(t.Context(), meta.DeliveryQuery{SubscriptionID: sub.ID, Limit: 1000})
		return err == nil && len(ds) == n && allIn(ds, coffer.DeliveryDelivered)
	})
	time.Sleep(100 * time.Millisecond)
	evs, _ := rcv.got()
	seen := map[string]int{}
	for _, ev := range evs {
		seen[ev.ID]++
	}
	if len(evs) != n || len(seen) != n {
		t.Fatalf("receiver got %d requests for %d distinct events, want %d each once", len(evs), len(seen), n)
	}
}
