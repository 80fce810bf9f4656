package bench

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1 µs to one hour; totals keep 3
// significant digits (0.1 % error), the per-interval histograms of the time series 2.
const (
	histMinUS       = 1
	histMaxUS       = int64(time.Hour / time.Microsecond)
	histSigFigs     = 3
	intervalSigFigs = 2
)

func newHist(sigfigs int) *hdr.Histogram { return hdr.New(histMinUS, histMaxUS, sigfigs) }

// recordDur adds d to h, clamped to the histogram's range.
func recordDur(h *hdr.Histogram, d time.Duration) {
	us := int64(d / time.Microsecond)
	us = min(max(us, histMinUS), histMaxUS)
	_ = h.RecordValue(us) // cannot fail: us is within range
}

// Latency summarises a latency distribution in milliseconds.
type Latency struct {
	Count  int64   `json:"count"`
	MinMs  float64 `json:"min_ms"`
	MeanMs float64 `json:"mean_ms"`
	P50Ms  float64 `json:"p50_ms"`
	P90Ms  float64 `json:"p90_ms"`
	P95Ms  float64 `json:"p95_ms"`
	P99Ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// summarize reads the percentiles of h; values are the histogram's highest
// equivalent values (within its precision of the true sample).
func summarize(h *hdr.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		Count:  h.TotalCount(),
		MinMs:  ms(h.Min()),
		MeanMs: h.Mean() / 1000,
		P50Ms:  ms(h.ValueAtQuantile(50)),
		P90Ms:  ms(h.ValueAtQuantile(90)),
		P95Ms:  ms(h.ValueAtQuantile(95)),
		P99Ms:  ms(h.ValueAtQuantile(99)),
		MaxMs:  ms(h.Max()),
	}
}
