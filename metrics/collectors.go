package metrics

import (
	"github.com/maypok86/otter/v2/stats"
	"github.com/prometheus/client_golang/prometheus"
)

// funcCollector emits metrics computed at scrape time from a component's counters.
type funcCollector struct {
	descs   []*prometheus.Desc
	collect func(ch chan<- prometheus.Metric)
}

func (f *funcCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range f.descs {
		ch <- d
	}
}

func (f *funcCollector) Collect(ch chan<- prometheus.Metric) { f.collect(ch) }

// Counter is a counter read from fn at scrape time.
func Counter(name, help string, fn func() float64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, fn)
}

// Gauge is a gauge read from fn at scrape time.
func Gauge(name, help string, fn func() float64) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, fn)
}

// LabeledCounter emits one counter per label value: fn returns the values and counts.
func LabeledCounter(name, help, label string, fn func() ([]string, []int64)) prometheus.Collector {
	d := prometheus.NewDesc(name, help, []string{label}, nil)
	return &funcCollector{descs: []*prometheus.Desc{d}, collect: func(ch chan<- prometheus.Metric) {
		labels, counts := fn()
		for i, l := range labels {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(counts[i]), l)
		}
	}}
}

var (
	cacheHits      = prometheus.NewDesc("coffer_cache_hits_total", "Cache hits.", []string{"cache"}, nil)
	cacheMisses    = prometheus.NewDesc("coffer_cache_misses_total", "Cache misses.", []string{"cache"}, nil)
	cacheEvictions = prometheus.NewDesc("coffer_cache_evictions_total", "Entries evicted for size.", []string{"cache"}, nil)
)

// CacheStats names one cache's statistics source.
type CacheStats struct {
	Name  string
	Stats func() stats.Stats
}

// Caches emits hits, misses and evictions for each cache, labelled with its name.
func Caches(caches ...CacheStats) prometheus.Collector {
	return &funcCollector{descs: []*prometheus.Desc{cacheHits, cacheMisses, cacheEvictions}, collect: func(ch chan<- prometheus.Metric) {
		for _, c := range caches {
			s := c.Stats()
			ch <- prometheus.MustNewConstMetric(cacheHits, prometheus.CounterValue, float64(s.Hits), c.Name)
			ch <- prometheus.MustNewConstMetric(cacheMisses, prometheus.CounterValue, float64(s.Misses), c.Name)
			ch <- prometheus.MustNewConstMetric(cacheEvictions, prometheus.CounterValue, float64(s.Evictions), c.Name)
		}
	}}
}

var (
	imageWorkerUp         = prometheus.NewDesc("coffer_image_remote_worker_up", "1 while the remote image worker is connected.", []string{"worker"}, nil)
	imageWorkerInFlight   = prometheus.NewDesc("coffer_image_remote_worker_in_flight", "Transformations sent to the remote image worker and not answered yet.", []string{"worker"}, nil)
	imageWorkerTransforms = prometheus.NewDesc("coffer_image_remote_worker_transforms_total", "Transformations the remote image worker answered.", []string{"worker"}, nil)
	imageWorkerFailures   = prometheus.NewDesc("coffer_image_remote_worker_failures_total", "Failed connection attempts to the remote image worker and connections to it that broke.", []string{"worker"}, nil)
)

// ImageWorkers emits each remote image worker's state, labelled with its configured
// address.
func ImageWorkers(fn func() []ImageWorker) prometheus.Collector {
	descs := []*prometheus.Desc{imageWorkerUp, imageWorkerInFlight, imageWorkerTransforms, imageWorkerFailures}
	return &funcCollector{descs: descs, collect: func(ch chan<- prometheus.Metric) {
		for _, w := range fn() {
			ch <- prometheus.MustNewConstMetric(imageWorkerUp, prometheus.GaugeValue, b2f(w.Up), w.Addr)
			ch <- prometheus.MustNewConstMetric(imageWorkerInFlight, prometheus.GaugeValue, float64(w.InFlight), w.Addr)
			ch <- prometheus.MustNewConstMetric(imageWorkerTransforms, prometheus.CounterValue, float64(w.Transforms), w.Addr)
			ch <- prometheus.MustNewConstMetric(imageWorkerFailures, prometheus.CounterValue, float64(w.Failures), w.Addr)
		}
	}}
}
