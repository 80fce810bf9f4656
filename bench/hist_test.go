package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// refPercentile is the nearest-rank percentile of sorted values.
func refPercentile(sorted []int64, q float64) int64 {
	rank := int(math.Ceil(q / 100 * float64(len(sorted))))
	return sorted[max(rank, 1)-1]
}

func TestSummarizeAgainstSortedReference(t *testing.T) {
	tests := []struct {
		name string
		gen  func(r *rand.Rand) int64 // microseconds
		n    int
	}{
		{"uniform 1ms..100ms", func(r *rand.Rand) int64 { return 1000 + r.Int64N(99000) }, 20000},
		{"lognormal", func(r *rand.Rand) int64 { return int64(math.Exp(7+1.5*r.NormFloat64())) + 1 }, 20000},
		{"bimodal with slow tail", func(r *rand.Rand) int64 {
			if r.IntN(100) == 0 {
				return 2_000_000 + r.Int64N(1_000_000)
			}
			return 200 + r.Int64N(300)
		}, 30000},
		{"single value", func(*rand.Rand) int64 { return 4321 }, 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			h := newHist(histSigFigs)
			vals := make([]int64, tc.n)
			var sum float64
			for i := range vals {
				vals[i] = tc.gen(r)
				sum += float64(vals[i])
				recordDur(h, time.Duration(vals[i])*time.Microsecond)
			}
			slices.Sort(vals)
			got := summarize(h)
			checks := []struct {
				name string
				got  float64
				want int64
			}{
				{"min", got.MinMs, vals[0]}, {"p50", got.P50Ms, refPercentile(vals, 50)},
				{"p90", got.P90Ms, refPercentile(vals, 90)}, {"p95", got.P95Ms, refPercentile(vals, 95)},
				{"p99", got.P99Ms, refPercentile(vals, 99)}, {"max", got.MaxMs, vals[len(vals)-1]},
			}
			for _, c := range checks {
				want := float64(c.want) / 1000
				if math.Abs(c.got-want) > want*0.002+0.001 { // 3 significant digits: 0.1 % (x2 for rounding)
					t.Errorf("%s = %.4f ms, reference %.4f ms", c.name, c.got, want)
				}
			}
			if mean := sum / float64(tc.n) / 1000; math.Abs(got.MeanMs-mean) > mean*0.002 {
				t.Errorf("mean = %.4f ms, reference %.4f ms", got.MeanMs, mean)
			}
			if got.Count != int64(tc.n) {
				t.Errorf("count = %d, want %d", got.Count, tc.n)
			}
		})
	}
}

func TestRecordDurClamps(t *testing.T) {
	h := newHist(histSigFigs)
	recordDur(h, 0)
	recordDur(h, 2*time.Hour)
	if h.TotalCount() != 2 || h.Min() != histMinUS || !h.ValuesAreEquivalent(h.Max(), histMaxUS) {
		t.Errorf("count %d min %d max %d", h.TotalCount(), h.Min(), h.Max())
	}
	if (summarize(newHist(histSigFigs)) != Latency{}) {
		t.Error("empty histogram gives a non-zero summary")
	}
}

func TestRecorderTickAndTotals(t *testing.T) {
	start := time.Now()
	rec := newRecorder(start)
	outs := []outcome{
		{kind: kindOK, status: 200, latency: 2 * time.Millisecond, ttfb: time.Millisecond, bytes: 100},
		{kind: kind5xx, status: 503, latency: 4 * time.Millisecond, ttfb: 4 * time.Millisecond, bytes: 10},
		{kind: kindConn, latency: time.Millisecond},
		{kind: kindDropped},
	}
	for i := range outs {
		rec.shardFor(i).record(&outs[i])
	}
	p := rec.Tick(start.Add(2*time.Second), 7)
	if p.Requests != 4 || p.Errors != 3 || p.Bytes != 110 || p.Workers != 7 || p.RPS != 2 || p.BPS != 55 {
		t.Errorf("point %+v", p)
	}
	if p.MaxMs < 3.9 || p.MaxMs > 4.1 { // the connection error has no latency sample
		t.Errorf("interval max %.3f ms, want 4", p.MaxMs)
	}
	if p2 := rec.Tick(start.Add(3*time.Second), 7); p2.Requests != 0 || p2.P99Ms != 0 {
		t.Errorf("second interval not empty: %+v", p2)
	}
	c, lat, ttfb, status := rec.totals()
	if c.Requests != 4 || c.Kinds[kindConn] != 1 || c.Kinds[kindDropped] != 1 || lat.TotalCount() != 2 ||
		ttfb.TotalCount() != 2 || status[200] != 1 || status[503] != 1 {
		t.Errorf("totals %+v lat %d ttfb %d status %v", c, lat.TotalCount(), ttfb.TotalCount(), status)
	}
}
