package tenant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// t0 is the tests' fixed "now": the limiters take the time as an argument.
var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func TestRateLimiterBurstAndRefill(t *testing.T) {
	r := NewRateLimiter(Limits{RequestsPerSecond: 10, Burst: 5}, UserTableConfig{})
	for i := range 5 {
		d := r.Allow(t0, "")
		if !d.OK || d.Limit != 5 || d.Remaining != 4-i || d.Reset != time.Duration(i+1)*100*time.Millisecond {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	d := r.Allow(t0, "")
	if d.OK || d.RetryAfter != 100*time.Millisecond || d.Remaining != 0 || d.Reset != 500*time.Millisecond {
		t.Fatalf("6th request: %+v, want refused, retry after 100ms", d)
	}
	if d := r.Allow(t0.Add(99*time.Millisecond), ""); d.OK || d.RetryAfter != time.Millisecond {
		t.Fatalf("at 99ms: %+v", d)
	}
	if d := r.Allow(t0.Add(100*time.Millisecond), ""); !d.OK || d.Remaining != 0 {
		t.Fatalf("at 100ms: %+v, want one allowed", d)
	}
	if d := r.Allow(t0.Add(time.Hour), ""); !d.OK || d.Remaining != 4 {
		t.Fatalf("an hour later: %+v, want a full bucket", d)
	}
}

func TestRateLimiterDefaults(t *testing.T) {
	if NewRateLimiter(Limits{BytesPerSecond: 1 << 20}, UserTableConfig{}) != nil {
		t.Error("a limiter without request limits")
	}
	var none *RateLimiter
	if d := none.Allow(t0, "u"); !d.OK || d.Limit != 0 {
		t.Errorf("nil limiter: %+v", d)
	}
	r := NewRateLimiter(Limits{RequestsPerSecond: 2.5}, UserTableConfig{})
	if d := r.Allow(t0, ""); d.Limit != 3 {
		t.Errorf("burst 0 at 2.5/s: limit %d, want 3 (one second's worth, rounded up)", d.Limit)
	}
	slow := NewRateLimiter(Limits{RequestsPerSecond: 1e-12, Burst: 1_000_000}, UserTableConfig{})
	if d := slow.Allow(t0, ""); !d.OK || d.Remaining != 999_999 {
		t.Errorf("a very low rate overflowed: %+v", d)
	}
}

func TestRateLimiterUsers(t *testing.T) {
	r := NewRateLimiter(Limits{RequestsPerSecond: 100, Burst: 10, UserRequestsPerSecond: 1, UserBurst: 2}, UserTableConfig{})
	for i := range 2 {
		if d := r.Allow(t0, "alice"); !d.OK || d.Limit != 2 || d.Remaining != 1-i {
			t.Fatalf("alice %d: %+v (the user's bucket binds)", i, d)
		}
	}
	if d := r.Allow(t0, "alice"); d.OK || d.RetryAfter != time.Second {
		t.Fatalf("alice 3: %+v, want refused for 1s", d)
	}
	for i := range 8 {
		if d := r.Allow(t0, fmt.Sprint("user", i)); !d.OK {
			t.Fatalf("user%d: %+v", i, d)
		}
	}
	// Alice's refusal spent none of the tenant's 10: 2 + 8 used, so the next is refused.
	d := r.Allow(t0, "bob")
	if d.OK || d.Limit != 10 {
		t.Fatalf("the tenant's 11th: %+v, want the tenant's refusal", d)
	}
}

func TestUserTableCap(t *testing.T) {
	r := NewRateLimiter(Limits{UserRequestsPerSecond: 1, UserBurst: 3}, UserTableConfig{MaxUsers: 4, Shards: 1})
	for i := range 4 {
		for range i + 1 { // user i spends i+1 requests: user3's bucket is emptiest
			r.Allow(t0, fmt.Sprint("u", i))
		}
	}
	r.Allow(t0, "new")
	if n := r.users.size(); n != 4 {
		t.Fatalf("%d users kept, want the cap 4", n)
	}
	if d := r.Allow(t0, "u0"); !d.OK || d.Remaining != 2 {
		t.Fatalf("u0, closest to full, should have been forgotten and start full: %+v", d)
	}
	if d := r.Allow(t0, "u2"); d.OK {
		t.Fatalf("u2 spent its burst, yet was allowed: its state was lost: %+v", d)
	}
	// Ten seconds later every bucket is full: a new user frees them all.
	r.Allow(t0.Add(10*time.Second), "later")
	if n := r.users.size(); n != 1 {
		t.Fatalf("%d users kept after the idle sweep, want 1", n)
	}
}

func TestLongUserKeys(t *testing.T) {
	r := NewRateLimiter(Limits{UserRequestsPerSecond: 1, UserBurst: 1}, UserTableConfig{})
	long := strings.Repeat("u", 10_000)
	if !r.Allow(t0, long+"1").OK || r.Allow(t0, long+"1").OK {
		t.Fatal("a long user key does not keep its bucket")
	}
	if !r.Allow(t0, long+"2").OK {
		t.Fatal("two long user keys share a bucket")
	}
	for i := range r.users.shards {
		for k := range r.users.shards[i].m {
			if len(k) > maxUserKey {
				t.Fatalf("a %d-byte key is kept", len(k))
			}
		}
	}
}

func TestRateLimiterConcurrent(t *testing.T) {
	r := NewRateLimiter(Limits{RequestsPerSecond: 1, Burst: 1000, UserRequestsPerSecond: 1, UserBurst: 100}, UserTableConfig{})
	var ok atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				if r.Allow(t0, fmt.Sprint("u", (g*500+i)%16)).OK {
					ok.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1000 {
		t.Fatalf("%d allowed at one instant, want exactly the burst 1000", ok.Load())
	}
}

func TestHeaders(t *testing.T) {
	refused := Decision{Limit: 5, Reset: 1500 * time.Millisecond, RetryAfter: 10 * time.Millisecond}
	allowed := Decision{OK: true, Limit: 5, Remaining: 3, Reset: 2 * time.Second}
	h := http.Header{}
	SetHeaders(h, refused)
	want := map[string]string{HeaderLimit: "5", HeaderRemaining: "0", HeaderReset: "2", HeaderRetryAfter: "1"}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("refused: %s = %q, want %q (in %v)", k, h.Get(k), v, h)
		}
	}
	if len(h) != len(want) {
		t.Errorf("refused: %v, want only %v", h, want)
	}
	got := string(AppendHeaders(nil, allowed))
	if got != "RateLimit-Limit: 5\r\nRateLimit-Remaining: 3\r\nRateLimit-Reset: 2\r\n" {
		t.Errorf("AppendHeaders(allowed) = %q", got)
	}
	if got := string(AppendHeaders(nil, refused)); got != "RateLimit-Limit: 5\r\nRateLimit-Remaining: 0\r\nRateLimit-Reset: 2\r\nRetry-After: 1\r\n" {
		t.Errorf("AppendHeaders(refused) = %q", got)
	}
	none := http.Header{}
	SetHeaders(none, Decision{OK: true})
	if len(none) != 0 || len(AppendHeaders(nil, Decision{OK: true})) != 0 {
		t.Error("an unlimited decision wrote headers")
	}
}

// fakeClock advances only when slept on, recording each sleep.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func TestBandwidthWait(t *testing.T) {
	clock := &fakeClock{now: t0}
	b := NewBandwidth(1000, clock)
	ctx := context.Background()
	for _, step := range []struct {
		n    int
		want time.Duration
	}{{1000, 0}, {500, 500 * time.Millisecond}, {250, 250 * time.Millisecond}} {
		before := len(clock.slept)
		if err := b.Wait(ctx, step.n); err != nil {
			t.Fatal(err)
		}
		var got time.Duration
		if len(clock.slept) > before {
			got = clock.slept[before]
		}
		if got != step.want {
			t.Errorf("Wait(%d) slept %v, want %v", step.n, got, step.want)
		}
	}
	if NewBandwidth(0, clock) != nil || (*Bandwidth)(nil).Wait(ctx, 1<<30) != nil {
		t.Error("an unlimited Bandwidth paced")
	}
}

func TestBandwidthWriter(t *testing.T) {
	clock := &fakeClock{now: t0}
	b := NewBandwidth(100_000, clock) // chunks of 10,000 bytes; a burst of 100,000
	body := bytes.Repeat([]byte("0123456789"), 30_000)
	var out bytes.Buffer
	n, err := b.Writer(context.Background(), &out).Write(body)
	if err != nil || n != len(body) || !bytes.Equal(out.Bytes(), body) {
		t.Fatalf("Write = %d, %v; the body arrived intact: %v", n, err, bytes.Equal(out.Bytes(), body))
	}
	// 300,000 bytes at 100,000/s with a 100,000 burst: 2 s of waiting in all.
	if elapsed := clock.Now().Sub(t0); elapsed != 2*time.Second || len(clock.slept) != 20 {
		t.Errorf("paced over %v in %d sleeps, want 2s in 20", elapsed, len(clock.slept))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n, err = b.Writer(ctx, &out).Write(body)
	if !errors.Is(err, context.Canceled) || n != 0 {
		t.Errorf("cancelled: %d, %v; want 0, context.Canceled", n, err)
	}
}
