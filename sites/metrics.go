package sites

import (
	"sort"

	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
)

// RegisterMetrics adds the sites' series to m: per site (labelled "<tenant>/<site>",
// the default tenant's as "(default)/<site>"), requests, body bytes and cache
// outcomes on this node; the edge cache's and the audit log's counters.
func (st *Runtime) RegisterMetrics(m *metrics.Metrics) {
	perSite := func(v func(*site.Stats) int64) func() ([]string, []int64) {
		return func() ([]string, []int64) { return st.siteCounters(v) }
	}
	m.Register(
		metrics.LabeledCounter("coffer_site_requests_total", "Requests answered by each site on this node.", "site",
			perSite(func(s *site.Stats) int64 { return s.Requests.Load() })),
		metrics.LabeledCounter("coffer_site_sent_bytes_total", "Response body bytes each site sent from this node.", "site",
			perSite(func(s *site.Stats) int64 { return s.Bytes.Load() })),
		metrics.LabeledCounter("coffer_site_cache_hits_total", "Answers of each site from the edge cache, fresh (X-Cache HIT).", "site",
			perSite(func(s *site.Stats) int64 { return s.Hits.Load() })),
		metrics.LabeledCounter("coffer_site_cache_misses_total", "Answers of each site fetched from its upstream (X-Cache MISS).", "site",
			perSite(func(s *site.Stats) int64 { return s.Misses.Load() })),
		metrics.LabeledCounter("coffer_site_cache_stale_total", "Stale answers of each site (X-Cache STALE: revalidating, or the upstream failed).", "site",
			perSite(func(s *site.Stats) int64 { return s.Stale.Load() })),
		metrics.Gauge("coffer_edge_cache_bytes", "Bytes the edge cache holds on disk, fills in progress included.",
			func() float64 { return float64(st.edge.Stats().BytesOnDisk) }),
		metrics.Counter("coffer_edge_upstream_fetches_total", "Requests the edge cache sent to upstream origins.",
			func() float64 { return float64(st.edge.Stats().UpstreamFetches) }),
		metrics.Counter("coffer_edge_evictions_total", "Objects the edge cache evicted to stay under --edge-cache-size.",
			func() float64 { return float64(st.edge.Stats().Evictions) }),
		metrics.Counter("coffer_edge_fill_errors_total", "Upstream fetches that failed mid-body (the partial object was discarded).",
			func() float64 { return float64(st.edge.Stats().FillErrors) }),
		metrics.Counter("coffer_audit_dropped_total", "Audit records dropped because the log could not keep up or failed (serving never waits for it).",
			func() float64 { return float64(st.auditStats().Dropped) }),
		metrics.Counter("coffer_audit_write_errors_total", "Audit log write errors.",
			func() float64 { return float64(st.auditStats().WriteErrors) }))
}

// siteCounters returns one counter of every site, labelled.
func (st *Runtime) siteCounters(v func(*site.Stats) int64) ([]string, []int64) {
	var labels []string
	values := map[string]int64{}
	st.handler.RangeStats(func(scope string, s *site.Stats) bool {
		l := scope
		if scope != "" && scope[0] == '/' {
			l = "(default)" + scope
		}
		labels = append(labels, l)
		values[l] = v(s)
		return true
	})
	sort.Strings(labels)
	out := make([]int64, len(labels))
	for i, l := range labels {
		out[i] = values[l]
	}
	return labels, out
}

// auditStats returns the audit log's counters (zero when it is off).
func (st *Runtime) auditStats() audit.Stats {
	if st.audit == nil {
		return audit.Stats{}
	}
	return st.audit.Stats()
}
