// Package metrics exposes coffer's Prometheus metrics: HTTP requests (duration by
// route and status, bytes in and out, in flight), and, read from the components'
// own counters at scrape time, database queries, blob calls, cache hits, misses and
// evictions, the invalidation bus and the image worker pool; plus the Go runtime and
// process collectors.
package metrics

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics owns a registry and the HTTP metrics.
type Metrics struct {
	reg      *prometheus.Registry
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
	endFn    func(route, method string, status int, d time.Duration, in, out int64)
	// observers caches duration's histogram per route, method and status, for a
	// lookup without WithLabelValues' hashing and status formatting. The map is never
	// changed: a new label set copies it (mu orders the copies).
	observers atomic.Pointer[map[observerKey]prometheus.Observer]
	mu        sync.Mutex
}

type observerKey struct {
	route, method string
	status        int
}

// New returns metrics with the Go runtime and process collectors registered.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "coffer_http_request_duration_seconds",
			Help:    "Time from request start to the end of the response, by route pattern, method and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "coffer_http_requests_in_flight", Help: "Requests being served now.",
		}),
		bytesIn: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "coffer_http_request_body_bytes_total", Help: "Request body bytes read.",
		}),
		bytesOut: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "coffer_http_response_body_bytes_total", Help: "Response body bytes written.",
		}),
	}
	m.reg.MustRegister(m.duration, m.inFlight, m.bytesIn, m.bytesOut,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.endFn = m.end
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Register adds collectors (see Counter, Gauge and Cache).
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Begin counts a request in flight; call the returned func with its outcome when it
// ends.
func (m *Metrics) Begin() func(route, method string, status int, d time.Duration, in, out int64) {
	m.inFlight.Inc()
	return m.endFn
}

func (m *Metrics) end(route, method string, status int, d time.Duration, in, out int64) {
	m.inFlight.Dec()
	if route == "" {
		route = "unmatched" // never the raw path: that would explode the label set
	}
	m.observer(route, method, status).Observe(d.Seconds())
	m.bytesIn.Add(float64(in))
	m.bytesOut.Add(float64(out))
}

// observer returns the duration histogram of one label set. The set of routes is
// fixed, but methods of unmatched requests come from clients: those are not cached.
func (m *Metrics) observer(route, method string, status int) prometheus.Observer {
	k := observerKey{route, method, status}
	if cur := m.observers.Load(); cur != nil {
		if o, ok := (*cur)[k]; ok {
			return o
		}
	}
	o := m.duration.WithLabelValues(route, method, strconv.Itoa(status))
	if route != "unmatched" {
		m.mu.Lock()
		next := map[observerKey]prometheus.Observer{k: o}
		if cur := m.observers.Load(); cur != nil {
			maps.Copy(next, *cur)
		}
		m.observers.Store(&next)
		m.mu.Unlock()
	}
	return o
}
