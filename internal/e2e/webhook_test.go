package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/webhook"
	"github.com/coffer/coffer/webhook/payload"
)

// eventLog is a webhook receiver on loopback: it checks every signature and counts
// file.created events per file id.
type eventLog struct {
	t      *testing.T
	secret string
	mu     sync.Mutex
	byFile map[string]int
	total  int
}

func (l *eventLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if err := webhook.Verify(l.secret, r.Header.Get(webhook.SignatureHeader), body, time.Now(), time.Minute); err != nil {
		l.t.Errorf("receiver: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var ev payload.Event
	if err := json.Unmarshal(body, &ev); err != nil || ev.Type != coffer.FileCreated || ev.File == nil {
		l.t.Errorf("receiver: unexpected event %s (%v)", body, err)
		return
	}
	l.mu.Lock()
	l.byFile[ev.File.ID]++
	l.total++
	l.mu.Unlock()
}

func (l *eventLog) snapshot() (map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]int, len(l.byFile))
	for k, v := range l.byFile {
		m[k] = v
	}
	return m, l.total
}

// TestWebhookEventsSurviveCrash kills the server with SIGKILL while 200 uploads run
// with a subscription active, restarts it, and checks the outbox's promise: every
// committed file gets its file.created event delivered (at least once), and no event
// exists for an upload that did not commit.
func TestWebhookEventsSurviveCrash(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		testWebhookCrash(t, []string{"COFFER_DATA_DIR=" + t.TempDir()})
	})
	t.Run("postgres+s3", func(t *testing.T) { testWebhookCrash(t, scaleEnv(t)) })
}

func testWebhookCrash(t *testing.T, env []string) {
	env = append(env, "COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8", "COFFER_WEBHOOK_TIMEOUT=1s")
	log := &eventLog{t: t, secret: "e2e-webhook-secret-0123", byFile: map[string]int{}}
	rcv := httptest.NewServer(log)
	t.Cleanup(rcv.Close)
	p := start(t, env...)
	sub := `{"url":"` + rcv.URL + `/events","events":["file.created"],"secret":"` + log.secret + `"}`
	resp, err := p.request(context.Background(), "POST", "/v1/webhooks", strings.NewReader(sub), "Content-Type", "application/json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create subscription: status %d", resp.StatusCode)
	}

	acked := uploadUntilKilled(t, p, 200, 60)
	_, before := log.snapshot()
	p = start(t, env...)
	files := p.listAll("default")
	listed := map[string]bool{}
	for _, f := range files {
		listed[f.ID] = true
	}
	for _, id := range acked {
		if !listed[id] {
			t.Errorf("acknowledged upload %s is missing after restart", id)
		}
	}
	// On PostgreSQL deliveries claimed by the killed node are due again when their lease
	// ends (timeout 1 s + 15 s); a SQLite node releases its own at start.
	waited := untilWithin(t, 40*time.Second, "an event for every committed file", func() bool {
		got, _ := log.snapshot()
		for id := range listed {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	time.Sleep(200 * time.Millisecond) // anything still in flight arrives
	got, total := log.snapshot()
	for id := range got {
		if !listed[id] {
			t.Errorf("event for file %s, which did not commit", id)
		}
	}
	t.Logf("%d uploads acknowledged, %d committed; %d events before the kill, %d in all for %d files (%d redelivered); all delivered %v after restart",
		len(acked), len(listed), before, total, len(got), total-len(got), waited.Round(time.Millisecond))
}

// uploadUntilKilled runs n small uploads from 20 clients and kills the server with
// SIGKILL once killAfter of them were acknowledged; it returns the acknowledged ids.
func uploadUntilKilled(t *testing.T, p *proc, n, killAfter int) []string {
	var mu sync.Mutex
	var acked []string
	var next atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	killed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for w := 0; w < 20; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				size := int64(1<<10) << (i % 12) // 1 KiB .. 2 MiB
				f, err := p.uploadStream(ctx, "hook/"+strconv.Itoa(i)+".bin", newGen(size, uint64(i)))
				if err != nil {
					continue
				}
				mu.Lock()
				acked = append(acked, f.ID)
				if len(acked) == killAfter {
					once.Do(func() { close(killed) })
				}
				mu.Unlock()
			}
		}()
	}
	select {
	case <-killed:
	case <-time.After(60 * time.Second):
		t.Fatal("uploads too slow")
	}
	p.kill9()
	cancel()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), acked...)
}
