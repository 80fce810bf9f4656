package httpserve

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

type accessLine struct {
	Level, Msg, Method, Path string
	Status                   int
	Bytes                    int64
	Skipped                  int64
	RequestID                string `json:"request_id"`
}

func accessLines(t *testing.T, b *bytes.Buffer) []accessLine {
	t.Helper()
	var out []accessLine
	dec := json.NewDecoder(b)
	for {
		var l accessLine
		if err := dec.Decode(&l); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
}

// In mode on with a budget, successful reads are logged up to the budget per second
// and the next logged read says how many were left out; errors and writes always
// are. In mode errors only statuses from 400 are logged; in mode off nothing.
func TestAccessLogPolicy(t *testing.T) {
	get, post := httptest.NewRequest("GET", "/v1/files/x", nil), httptest.NewRequest("POST", "/v1/files", nil)
	t0 := time.Unix(1000, 0)
	cases := []struct {
		name string
		cfg  AccessLogConfig
		run  func(a *AccessLog)
		want []accessLine // Method, Status, Skipped compared
	}{
		{"budget", AccessLogConfig{Mode: AccessLogOn, ReadsPerSecond: 2}, func(a *AccessLog) {
			for range 5 {
				a.Request(get, "id", 200, 10, t0, time.Millisecond)
			}
			a.Request(get, "id", 404, 10, t0, time.Millisecond)  // an error: always
			a.Request(post, "id", 201, 10, t0, time.Millisecond) // a write: always
			a.Request(get, "id", 206, 10, t0.Add(time.Second), time.Millisecond)
			a.Request(get, "id", 304, 10, t0.Add(1500*time.Millisecond), time.Millisecond)
			a.Request(get, "id", 200, 10, t0.Add(1900*time.Millisecond), time.Millisecond) // third in that second
		}, []accessLine{{Method: "GET", Status: 200}, {Method: "GET", Status: 200}, {Method: "GET", Status: 404},
			{Method: "POST", Status: 201}, {Method: "GET", Status: 206, Skipped: 3}, {Method: "GET", Status: 304}}},
		{"every request", AccessLogConfig{Mode: AccessLogOn}, func(a *AccessLog) {
			for range 3 {
				a.Request(get, "id", 200, 10, t0, time.Millisecond)
			}
		}, []accessLine{{Method: "GET", Status: 200}, {Method: "GET", Status: 200}, {Method: "GET", Status: 200}}},
		{"errors", AccessLogConfig{Mode: AccessLogErrors, ReadsPerSecond: 1}, func(a *AccessLog) {
			a.Request(get, "id", 200, 10, t0, time.Millisecond)
			a.Request(post, "id", 201, 10, t0, time.Millisecond)
			a.Request(get, "id", 401, 10, t0, time.Millisecond)
			a.Request(post, "id", 503, 10, t0, time.Millisecond)
		}, []accessLine{{Method: "GET", Status: 401}, {Method: "POST", Status: 503}}},
		{"off", AccessLogConfig{Mode: AccessLogOff}, func(a *AccessLog) {
			a.Request(get, "id", 500, 10, t0, time.Millisecond)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			a := NewAccessLog(c.cfg, slog.New(slog.NewJSONHandler(&buf, nil)))
			c.run(a)
			got := accessLines(t, &buf)
			if len(got) != len(c.want) {
				t.Fatalf("%d lines, want %d: %+v", len(got), len(c.want), got)
			}
			for i, w := range c.want {
				g := got[i]
				if g.Method != w.Method || g.Status != w.Status || g.Skipped != w.Skipped || g.Msg != "request" ||
					g.Level != "INFO" || g.Path == "" || g.RequestID != "id" || g.Bytes != 10 {
					t.Errorf("line %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// Above info level the access log writes nothing.
func TestAccessLogFollowsLevel(t *testing.T) {
	var buf bytes.Buffer
	a := NewAccessLog(AccessLogConfig{Mode: AccessLogOn}, slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	a.Request(httptest.NewRequest("GET", "/x", nil), "id", 500, 0, time.Now(), 0)
	if buf.Len() != 0 {
		t.Fatalf("logged at level warn: %s", buf.String())
	}
}

func TestAccessLogConfigValidate(t *testing.T) {
	for _, c := range []AccessLogConfig{{Mode: "all"}, {Mode: ""}, {Mode: AccessLogOn, ReadsPerSecond: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if err := DefaultAccessLogConfig().Validate(); err != nil {
		t.Error(err)
	}
}

// A request that the budget leaves out allocates nothing; a logged one allocates what
// slog needs for six attributes (its record holds five inline): 2 objects.
func TestAccessLogAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	get := httptest.NewRequest("GET", "/v1/files/x", nil)
	a := NewAccessLog(AccessLogConfig{Mode: AccessLogOn, ReadsPerSecond: 1}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	now := time.Now()
	a.Request(get, "id", 200, 1, now, time.Millisecond)
	if n := testing.AllocsPerRun(100, func() { a.Request(get, "id", 200, 1, now, time.Millisecond) }); n != 0 {
		t.Errorf("skipped read: %v allocs", n)
	}
	if n := testing.AllocsPerRun(100, func() { a.Request(get, "id", 404, 1, now, time.Millisecond) }); n > 2 {
		t.Errorf("logged line: %v allocs", n)
	}
}

// BenchmarkAccessLog measures one request's access log call alone: a JSON line
// written to a file, a successful read the budget leaves out, and the log off.
func BenchmarkAccessLog(b *testing.B) {
	get := httptest.NewRequest("GET", "/v1/files/0b7c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d", nil)
	for _, c := range []struct {
		name string
		cfg  AccessLogConfig
	}{
		{"line", AccessLogConfig{Mode: AccessLogOn}},
		{"skipped", AccessLogConfig{Mode: AccessLogOn, ReadsPerSecond: 1}},
		{"off", AccessLogConfig{Mode: AccessLogOff}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			a := NewAccessLog(c.cfg, slog.New(slog.NewJSONHandler(f, nil)))
			start := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				a.Request(get, "9f3a1c2b4d5e1k", 200, 102400, start, 1234*time.Microsecond)
			}
		})
	}
}
