package audit

import "time"

// Record is one request served by a site: one JSON line of the audit log.
type Record struct {
	Time      time.Time `json:"time"`
	Tenant    string    `json:"tenant"`
	Site      string    `json:"site"`
	Host      string    `json:"host"`
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Target    string    `json:"target"` // "bucket:<id>", "http:<origin url>", "s3:<bucket>", "redirect"
	Status    int       `json:"status"`
	Bytes     int64     `json:"bytes"`       // body bytes sent
	Duration  float64   `json:"duration_ms"` // milliseconds
	Cache     string    `json:"cache"`       // HIT MISS STALE REVALIDATED BYPASS
	Client    string    `json:"client"`      // client address (no port)
	UserID    string    `json:"user_id,omitempty"`
	RequestID string    `json:"request_id"`
}
