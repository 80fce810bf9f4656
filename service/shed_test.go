package service

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// Refusals are logged at most once per 10 s, and each line counts those since the
// previous one.
func TestWarnLimit(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	l := newWarnLimit("queue full", func() time.Time { return now }, slog.New(slog.NewTextHandler(&buf, nil)))
	l.refused("queue", 64) // logged
	l.refused("queue", 64)
	now = now.Add(9 * time.Second)
	l.refused("queue", 64)
	now = now.Add(time.Second) // 10 s after the first line
	l.refused("queue", 64)     // logged: 3 since the last line
	now = now.Add(time.Hour)
	l.refused("queue", 64) // logged: 1
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"refused_since_last_line=1", "refused_since_last_line=3", "refused_since_last_line=1"}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], "level=WARN") || !strings.Contains(lines[i], w) || !strings.Contains(lines[i], "queue=64") {
			t.Errorf("line %d: %s; want WARN, %s", i, lines[i], w)
		}
	}
}
