package bench

import (
	"runtime"
	"sort"
	"strconv"
	"time"
)

// Results are everything a run measured; WriteJSON, WriteText and WriteHTML render
// them.
type Results struct {
	Started    time.Time       `json:"started"`
	Host       Host            `json:"host"`
	Mode       string          `json:"mode"` // "closed" or "open"
	Rate       float64         `json:"rate,omitempty"`
	Endpoints  []Endpoint      `json:"endpoints"` // A, then B in compare mode
	Runs       []RunResult     `json:"runs"`
	Comparison []ComparedStats `json:"comparison,omitempty"`
}

// Host describes the machine that ran the generator.
type Host struct {
	Cores     int    `json:"cores"`
	OS        string `json:"os"`
	Arch      string `json:"arch"`
	GoVersion string `json:"go_version"`
}

func thisHost() Host {
	return Host{Cores: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
}

// RunResult is one scenario run against one endpoint.
type RunResult struct {
	Scenario         string           `json:"scenario"`
	Kind             Kind             `json:"kind"`
	Endpoint         string           `json:"endpoint"`        // "A" or "B"
	Round            int              `json:"round,omitempty"` // compare mode: 1..Rounds
	URL              string           `json:"url"`
	Stages           []Stage          `json:"stages"`
	DurationS        float64          `json:"duration_s"`
	Requests         int64            `json:"requests"`
	Errors           int64            `json:"errors"`
	ErrorsByKind     map[string]int64 `json:"errors_by_kind"`
	Status           map[string]int64 `json:"status"`
	Bytes            int64            `json:"bytes"`
	RPS              float64          `json:"rps"`
	BytesPerS        float64          `json:"bytes_per_s"`
	Latency          Latency          `json:"latency"`
	TTFB             Latency          `json:"ttfb"`
	Server           *ServerStats     `json:"server,omitempty"`
	ServerMetrics    *ServerStats     `json:"server_metrics,omitempty"`
	ClientCPUSeconds float64          `json:"client_cpu_seconds"`
	Series           []Point          `json:"series"`
}

// newRunResult turns a finished generator into a result.
func newRunResult(sc Scenario, ep string, round int, url string, g *generator) RunResult {
	c, lat, ttfb, status := g.rec.totals()
	r := RunResult{Scenario: sc.Name, Kind: sc.Kind, Endpoint: ep, Round: round, URL: url,
		Stages: g.spec.sched.Stages(), DurationS: g.elapsed.Seconds(), Requests: c.Requests,
		Errors: c.Errors, Bytes: c.Bytes, Latency: summarize(lat), TTFB: summarize(ttfb),
		ErrorsByKind: map[string]int64{}, Status: map[string]int64{}, Series: g.points}
	for k := errKind(1); k < numKinds; k++ {
		if c.Kinds[k] > 0 {
			r.ErrorsByKind[k.String()] = c.Kinds[k]
		}
	}
	for code, n := range status {
		r.Status[strconv.Itoa(code)] = n
	}
	if s := g.elapsed.Seconds(); s > 0 {
		r.RPS, r.BytesPerS = float64(c.Requests)/s, float64(c.Bytes)/s
	}
	return r
}

// ErrorKinds returns the names of r's error kinds, sorted.
func (r *RunResult) ErrorKinds() []string {
	var ks []string
	for k := range r.ErrorsByKind {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
