package tenancy

import (
	"cmp"
	"slices"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/metrics"
)

// otherTenants is the metrics label of every tenant without a label of its own.
const otherTenants = "other"

// tenantLabel is tenant id's metrics label.
func tenantLabel(id string) string {
	if id == coffer.DefaultTenantID {
		return "(default)"
	}
	return id
}

// RegisterMetrics adds the per-tenant counters to m: requests and served bytes of
// this node, labelled by tenant for at most MetricsLabels tenants and "other" for
// the rest. A tenant keeps its label once given (the busiest at the scrape that
// first sees it while labels are left), so every series only ever grows, as
// counters must.
func (rt *Runtime) RegisterMetrics(m *metrics.Metrics) {
	m.Register(
		metrics.LabeledCounter("coffer_tenant_requests_total", "Requests answered for each tenant by this node (tenants past --tenant-metrics-labels count as \"other\").", "tenant",
			func() ([]string, []int64) {
				return rt.counters(func(c *servedCounts) int64 { return c.requests.Load() })
			}),
		metrics.LabeledCounter("coffer_tenant_served_bytes_total", "Response body bytes sent for each tenant by this node (Content-Length of net/http's answers, bytes of the fast path's).", "tenant",
			func() ([]string, []int64) { return rt.counters(func(c *servedCounts) int64 { return c.bytes.Load() }) }))
}

// counters returns the labels and the values of one counter, summed per label.
func (rt *Runtime) counters(value func(*servedCounts) int64) ([]string, []int64) {
	type row struct {
		id       string
		requests int64
		c        *servedCounts
	}
	var rows []row
	rt.counts.Range(func(k, v any) bool {
		c := v.(*servedCounts)
		rows = append(rows, row{k.(string), c.requests.Load(), c})
		return true
	})
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.requests, a.requests) })
	rt.labelMu.Lock()
	defer rt.labelMu.Unlock()
	sums := map[string]int64{}
	for _, r := range rows {
		l, ok := rt.labels[r.id]
		if !ok && len(rt.labels) < rt.cfg.MetricsLabels {
			l, ok = tenantLabel(r.id), true
			rt.labels[r.id] = l
		}
		if !ok {
			l = otherTenants
		}
		sums[l] += value(r.c)
	}
	labels := make([]string, 0, len(sums))
	values := make([]int64, 0, len(sums))
	for l, v := range sums {
		labels, values = append(labels, l), append(values, v)
	}
	return labels, values
}
