package metrics

import (
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/webhook"
)

// Sources are the components whose counters the metrics report; nil ones are skipped.
type Sources struct {
	DB       *meta.Counting  // database calls
	Meta     *cache.Meta     // file and bucket caches
	Content  *cache.Content  // hot-content cache
	Variants *cache.Variants // transformed images
	Blobs    *blob.Store     // blob store calls and bytes
	Bus      BusStats        // the cluster bus's listener (nil: one node)
	Webhooks *webhook.Stats  // webhook delivery attempts
	// Images reports the image worker pool: waiting requests and busy workers.
	Images func() (queued, busy int)
	// ImageWorkerStarts counts image worker processes started (nil: no worker).
	ImageWorkerStarts func() int64
	// ImageRemoteWorkers reports the remote image workers (nil: none configured).
	ImageRemoteWorkers func() []ImageWorker
	// FastPath reports the HTTP/1.1 fast path: requests it answered and connections
	// it handed to net/http (nil: no fast path).
	FastPath func() (answered, handedOff int64)
}

// BusStats is what the metrics read of the cluster bus's listener (bus/postgres.Bus).
type BusStats interface {
	Connected() bool
	Received() int64 // events received from the other nodes and the database
	Reconnects() int64
}

// ImageWorker is one remote image worker's state at scrape time.
type ImageWorker struct {
	Addr       string // as configured: a bounded label
	Up         bool
	InFlight   int64
	Transforms int64 // transformations it answered
	Failures   int64 // failed connection attempts and broken connections
}

// Watch registers collectors that read src at scrape time.
func (m *Metrics) Watch(src Sources) {
	if src.DB != nil {
		m.Register(LabeledCounter("coffer_db_queries_total", "Metadata store calls (each one or more database round trips), by method.", "method",
			func() ([]string, []int64) { c := src.DB.Counts(); return meta.MethodNames[:], c[:] }))
	}
	var caches []CacheStats
	if src.Meta != nil {
		caches = append(caches, CacheStats{"file", src.Meta.FileStats}, CacheStats{"bucket", src.Meta.BucketStats})
	}
	if c := src.Content; c != nil {
		caches = append(caches, CacheStats{"content", c.Stats})
		m.Register(Gauge("coffer_content_cache_bytes", "Bytes held by the hot-content cache.", func() float64 { return float64(c.WeightedSize()) }))
	}
	if src.Variants != nil {
		caches = append(caches, CacheStats{"variant", src.Variants.Stats})
	}
	if len(caches) > 0 {
		m.Register(Caches(caches...))
	}
	if b := src.Blobs; b != nil {
		m.Register(
			Counter("coffer_blob_calls_total", "Blob store calls.", func() float64 { return float64(b.Calls()) }),
			Counter("coffer_blob_read_bytes_total", "Bytes read from the blob store.", func() float64 { return float64(b.BytesOut()) }),
			Counter("coffer_blob_written_bytes_total", "Bytes written to the blob store.", func() float64 { return float64(b.BytesIn()) }))
	}
	if bus := src.Bus; bus != nil {
		m.Register(
			Counter("coffer_invalidations_received_total", "Invalidations received from the database.", func() float64 { return float64(bus.Received()) }),
			Counter("coffer_invalidation_bus_reconnects_total", "Times the invalidation listener reconnected (each flushes the caches).", func() float64 { return float64(bus.Reconnects()) }),
			Gauge("coffer_invalidation_bus_connected", "1 while the invalidation listener is connected.", func() float64 { return b2f(bus.Connected()) }))
	}
	if w := src.Webhooks; w != nil {
		m.Register(
			Counter("coffer_webhook_delivered_total", "Webhook deliveries answered with 2xx.", func() float64 { return float64(w.Delivered.Load()) }),
			Counter("coffer_webhook_failed_attempts_total", "Webhook attempts that failed and will be retried.", func() float64 { return float64(w.Failed.Load()) }),
			Counter("coffer_webhook_dead_total", "Webhook deliveries that failed their last attempt.", func() float64 { return float64(w.Dead.Load()) }),
			Gauge("coffer_webhook_in_flight", "Webhook attempts running on this node.", func() float64 { return float64(w.InFlight.Load()) }))
	}
	if src.Images != nil {
		m.Register(
			Gauge("coffer_image_queue_depth", "Image transformations waiting for a worker.", func() float64 { q, _ := src.Images(); return float64(q) }),
			Gauge("coffer_image_workers_busy", "Image workers transforming now.", func() float64 { _, b := src.Images(); return float64(b) }))
	}
	if src.ImageWorkerStarts != nil {
		m.Register(Counter("coffer_image_worker_starts_total", "coffer-imager processes started: the first transform starts one, each further start replaced one that died or was stopped when idle.",
			func() float64 { return float64(src.ImageWorkerStarts()) }))
	}
	if src.ImageRemoteWorkers != nil {
		m.Register(ImageWorkers(src.ImageRemoteWorkers))
	}
	if f := src.FastPath; f != nil {
		m.Register(
			Counter("coffer_http_fast_path_requests_total", "Requests answered on the HTTP/1.1 fast path (also counted in coffer_http_request_duration_seconds).",
				func() float64 { a, _ := f(); return float64(a) }),
			Counter("coffer_http_fast_path_handoffs_total", "Connections the fast path handed to net/http (at their first request it does not answer).",
				func() float64 { _, h := f(); return float64(h) }))
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
