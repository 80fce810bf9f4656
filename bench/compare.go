package bench

import (
	"math"
	"sort"
	"strconv"
)

// ComparedStats is one metric of one scenario in compare mode: the median over the
// rounds on each endpoint and their ratio.
type ComparedStats struct {
	Scenario string    `json:"scenario"`
	Metric   string    `json:"metric"`
	Better   string    `json:"better"` // "higher" or "lower"
	A        []float64 `json:"a"`      // one value per round
	B        []float64 `json:"b"`
	MedianA  float64   `json:"median_a"`
	MedianB  float64   `json:"median_b"`
	Ratio    float64   `json:"ratio_b_over_a"` // NaN-free: 0 when the median of A is 0
}

// metric reads one figure from a run; ok is false when the run lacks it.
type metric struct {
	name   string
	better string
	get    func(r *RunResult) (float64, bool)
}

func always(f func(r *RunResult) float64) func(r *RunResult) (float64, bool) {
	return func(r *RunResult) (float64, bool) { return f(r), true }
}

// serverFigure reads a figure of the proc stats, else of /metrics.
func serverFigure(f func(s *ServerStats, r *RunResult) float64) func(r *RunResult) (float64, bool) {
	return func(r *RunResult) (float64, bool) {
		if s := r.Server; s != nil {
			return f(s, r), true
		}
		if s := r.ServerMetrics; s != nil {
			return f(s, r), true
		}
		return 0, false
	}
}

// compareMetrics are the figures compare mode reports, in order.
func compareMetrics() []metric {
	return []metric{
		{"req/s", "higher", always(func(r *RunResult) float64 { return r.RPS })},
		{"MB/s", "higher", always(func(r *RunResult) float64 { return r.BytesPerS / 1e6 })},
		{"p50 ms", "lower", always(func(r *RunResult) float64 { return r.Latency.P50Ms })},
		{"p90 ms", "lower", always(func(r *RunResult) float64 { return r.Latency.P90Ms })},
		{"p99 ms", "lower", always(func(r *RunResult) float64 { return r.Latency.P99Ms })},
		{"ttfb p50 ms", "lower", always(func(r *RunResult) float64 { return r.TTFB.P50Ms })},
		{"error %", "lower", always(func(r *RunResult) float64 { return errorRate(r) })},
		{"server peak RSS MB", "lower", serverFigure(func(s *ServerStats, _ *RunResult) float64 {
			return float64(s.PeakRSSBytes) / 1e6
		})},
		{"server CPU ms/req", "lower", serverFigure(func(s *ServerStats, r *RunResult) float64 {
			return s.CPUSeconds * 1000 / math.Max(float64(r.Requests), 1)
		})},
	}
}

func errorRate(r *RunResult) float64 {
	if r.Requests == 0 {
		return 0
	}
	return 100 * float64(r.Errors) / float64(r.Requests)
}

// Compared computes, per scenario (in the order of runs) and metric, the medians of
// endpoints A and B over their rounds and the ratio B/A. A metric missing from some
// run (e.g. no server stats for B) is left out.
func Compared(runs []RunResult) []ComparedStats {
	var order []string
	byScenario := map[string][]*RunResult{}
	for i := range runs {
		r := &runs[i]
		if _, ok := byScenario[r.Scenario]; !ok {
			order = append(order, r.Scenario)
		}
		byScenario[r.Scenario] = append(byScenario[r.Scenario], r)
	}
	var out []ComparedStats
	for _, sc := range order {
		for _, m := range compareMetrics() {
			if cs, ok := compareOne(sc, m, byScenario[sc]); ok {
				out = append(out, cs)
			}
		}
	}
	return out
}

func compareOne(sc string, m metric, runs []*RunResult) (ComparedStats, bool) {
	cs := ComparedStats{Scenario: sc, Metric: m.name, Better: m.better}
	for _, r := range runs {
		v, ok := m.get(r)
		if !ok {
			return cs, false
		}
		if r.Endpoint == "B" {
			cs.B = append(cs.B, v)
		} else {
			cs.A = append(cs.A, v)
		}
	}
	if len(cs.A) == 0 || len(cs.B) == 0 {
		return cs, false
	}
	cs.MedianA, cs.MedianB = median(cs.A), median(cs.B)
	if cs.MedianA != 0 {
		cs.Ratio = cs.MedianB / cs.MedianA
	}
	return cs, true
}

// RatioText formats the ratio B/A with two decimals, or "-" when A's median is 0.
func (c ComparedStats) RatioText() string {
	if c.MedianA == 0 {
		return "-"
	}
	return strconv.FormatFloat(c.Ratio, 'f', 2, 64)
}

// median returns the middle value of xs (the mean of the two middle ones for an even
// count); xs is not modified.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
