package app

import (
	"github.com/maypok86/otter/v2/stats"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
)

// node reports this server's own state to the RPC face (rpcapi.Node): the caches
// and the image engine app built, which the service does not hold.
type node struct{ s *Main }

var _ rpcapi.Node = node{}

// CacheStats returns the counters of the caches that are on (admin).
func (n node) CacheStats(p *coffer.Principal) ([]rpcapi.CacheStats, error) {
	if err := service.RequireAdmin(p); err != nil {
		return nil, err
	}
	st := n.s.st
	var out []rpcapi.CacheStats
	add := func(name string, s stats.Stats) {
		out = append(out, rpcapi.CacheStats{Name: name, Hits: s.Hits, Misses: s.Misses, Evictions: s.Evictions})
	}
	if st.cache != nil {
		add("file", st.cache.FileStats())
		add("bucket", st.cache.BucketStats())
	}
	if st.content != nil {
		add("content", st.content.Stats())
	}
	if st.variants != nil {
		add("variant", st.variants.Stats())
	}
	return out, nil
}

// ImageWorkers returns the image worker pool's state (admin).
func (n node) ImageWorkers(p *coffer.Principal) (rpcapi.ImageWorkers, error) {
	if err := service.RequireAdmin(p); err != nil {
		return rpcapi.ImageWorkers{}, err
	}
	e := n.s.images
	pool := e.Pool()
	w := rpcapi.ImageWorkers{Workers: pool.Workers(), Busy: pool.Busy(), Queued: pool.Queued(), QueueLimit: pool.QueueLen()}
	w.Enabled = imaging.Enabled(e)
	if starts := remote.Starts(e); starts != nil {
		w.Starts = starts()
	}
	for _, r := range n.s.ImageWorkers() {
		w.Remote = append(w.Remote, rpcapi.RemoteImageWorker{Addr: r.Addr, Healthy: r.Healthy, InFlight: r.InFlight,
			Transforms: r.Transforms, Failures: r.Failures, FailuresTotal: r.FailuresTotal, LastError: r.LastError})
	}
	return w, nil
}
