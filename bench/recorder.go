package bench

import (
	"runtime"
	"sync"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// errKind classifies the outcome of one request.
type errKind uint8

const (
	kindOK      errKind = iota // 2xx response, body read completely
	kind1xx3xx                 // a final 1xx or a 3xx status
	kind4xx                    // 4xx status
	kind5xx                    // 5xx status
	kindTimeout                // the request timed out (no response, or the body stalled)
	kindConn                   // connection refused, reset or closed early
	kindOther                  // anything else (malformed response, bad URL)
	kindDropped                // open loop: the arrival found every worker busy
	numKinds
)

// String names the kind as it appears in reports.
func (k errKind) String() string {
	switch k {
	case kindOK:
		return "ok"
	case kind1xx3xx:
		return "status_1xx_3xx"
	case kind4xx:
		return "status_4xx"
	case kind5xx:
		return "status_5xx"
	case kindTimeout:
		return "timeout"
	case kindConn:
		return "connection"
	case kindDropped:
		return "dropped"
	}
	return "other"
}

// statusKind maps an HTTP status to its kind.
func statusKind(code int) errKind {
	switch {
	case code >= 200 && code < 300:
		return kindOK
	case code >= 400 && code < 500:
		return kind4xx
	case code >= 500:
		return kind5xx
	}
	return kind1xx3xx
}

// outcome is what one request reports.
type outcome struct {
	kind    errKind
	status  int           // 0 without a response
	latency time.Duration // start (intended start in open loop) to the body's end
	ttfb    time.Duration // start to the response headers; 0 without a response
	bytes   int64         // body bytes received (downloads) or sent (uploads)
}

// shard is one lock-protected part of a recorder; workers spread over shards so that
// hundreds of them rarely wait on one lock.
type shard struct {
	mu       sync.Mutex
	latency  *hdr.Histogram
	ttfb     *hdr.Histogram
	interval *hdr.Histogram
	counts   counts
	cur      counts // since the last tick
	status   map[int]int64
}

// counts are the additive totals of a run or interval.
type counts struct {
	Requests int64
	Errors   int64
	Bytes    int64
	Kinds    [numKinds]int64
}

func (c *counts) add(o *outcome) {
	c.Requests++
	c.Bytes += o.bytes
	c.Kinds[o.kind]++
	if o.kind != kindOK {
		c.Errors++
	}
}

func (c *counts) merge(o *counts) {
	c.Requests += o.Requests
	c.Errors += o.Errors
	c.Bytes += o.Bytes
	for i := range c.Kinds {
		c.Kinds[i] += o.Kinds[i]
	}
}

// recorder collects outcomes from many workers: latency and time-to-first-byte
// histograms over the run, counts by kind and status, and a time series built by
// Tick. Latencies are recorded for every request that got a response (any status);
// timeouts, connection errors and dropped arrivals only count.
type recorder struct {
	shards   []*shard
	tickHist *hdr.Histogram // used by Tick only
	start    time.Time
	last     time.Time
}

func newRecorder(start time.Time) *recorder {
	n := 4 * runtime.GOMAXPROCS(0)
	r := &recorder{shards: make([]*shard, n), tickHist: newHist(intervalSigFigs), start: start, last: start}
	for i := range r.shards {
		r.shards[i] = &shard{latency: newHist(histSigFigs), ttfb: newHist(histSigFigs),
			interval: newHist(intervalSigFigs), status: map[int]int64{}}
	}
	return r
}

// shardFor returns the shard that worker i records into.
func (r *recorder) shardFor(i int) *shard { return r.shards[i%len(r.shards)] }

// record adds one outcome.
func (s *shard) record(o *outcome) {
	s.mu.Lock()
	s.counts.add(o)
	s.cur.add(o)
	if o.status != 0 {
		s.status[o.status]++
	}
	if o.ttfb > 0 {
		recordDur(s.latency, o.latency)
		recordDur(s.ttfb, o.ttfb)
		recordDur(s.interval, o.latency)
	}
	s.mu.Unlock()
}

// Point is one interval of the time series.
type Point struct {
	T        float64 `json:"t_s"` // end of the interval, seconds since the start
	Workers  int     `json:"workers"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Bytes    int64   `json:"bytes"`
	RPS      float64 `json:"rps"`
	BPS      float64 `json:"bytes_per_s"`
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// Tick closes the current interval at now and returns it.
func (r *recorder) Tick(now time.Time, workers int) Point {
	var c counts
	r.tickHist.Reset()
	for _, s := range r.shards {
		s.mu.Lock()
		c.merge(&s.cur)
		s.cur = counts{}
		r.tickHist.Merge(s.interval)
		s.interval.Reset()
		s.mu.Unlock()
	}
	secs := now.Sub(r.last).Seconds()
	r.last = now
	l := summarize(r.tickHist)
	p := Point{T: now.Sub(r.start).Seconds(), Workers: workers, Requests: c.Requests, Errors: c.Errors,
		Bytes: c.Bytes, P50Ms: l.P50Ms, P90Ms: l.P90Ms, P99Ms: l.P99Ms, MaxMs: l.MaxMs}
	if secs > 0 {
		p.RPS = float64(c.Requests) / secs
		p.BPS = float64(c.Bytes) / secs
	}
	return p
}

// totals merges every shard: the run's counts, latency and TTFB histograms and the
// count of each status code.
func (r *recorder) totals() (counts, *hdr.Histogram, *hdr.Histogram, map[int]int64) {
	var c counts
	lat, ttfb := newHist(histSigFigs), newHist(histSigFigs)
	status := map[int]int64{}
	for _, s := range r.shards {
		s.mu.Lock()
		c.merge(&s.counts)
		lat.Merge(s.latency)
		ttfb.Merge(s.ttfb)
		for k, v := range s.status {
			status[k] += v
		}
		s.mu.Unlock()
	}
	return c, lat, ttfb, status
}
