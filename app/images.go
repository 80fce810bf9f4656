package app

import (
	"log/slog"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/metrics"
)

// imageSetup returns the image engine's settings (remote.Open chooses and starts it).
func (c *Config) imageSetup(log *slog.Logger) remote.Setup {
	icfg := imaging.DefaultConfig()
	icfg.Workers, icfg.Queue, icfg.MaxSourcePixels, icfg.MaxSourceBytes = c.ImageWorkers, c.ImageQueue, c.ImageMaxPixels, c.ImageMaxBytes
	icfg.MaxCost, icfg.Timeout, icfg.UserWorkers, icfg.UserQueue = c.ImageMaxCost, c.ImageTimeout, c.ImageUserWorkers, c.ImageUserQueue
	return remote.Setup{Imaging: icfg, Worker: c.ImageWorker, Idle: c.ImageWorkerIdle, Remote: c.ImageWorkersRemote,
		Secret: []byte(c.ImageWorkersSecret), TLSCA: c.ImageWorkersTLSCA, TLSCert: c.ImageWorkersTLSCert, TLSKey: c.ImageWorkersTLSKey, Log: log}
}

// ImageWorkers returns the state of the remote image workers, in the order of
// --image-workers-remote; nil when transformations run in a child process or are
// off. (For the management API's server.ImageWorkers.)
func (s *Main) ImageWorkers() []remote.WorkerState { return remote.Workers(s.images) }

// remoteWorkerStats returns the per-worker metrics source of e, nil unless e sends
// transformations to remote workers.
func remoteWorkerStats(e imaging.Engine) func() []metrics.ImageWorker {
	c, ok := e.(*remote.Cluster)
	if !ok {
		return nil
	}
	return func() []metrics.ImageWorker {
		states := c.Workers()
		out := make([]metrics.ImageWorker, len(states))
		for i, s := range states {
			out[i] = metrics.ImageWorker{Addr: s.Addr, Up: s.Healthy, InFlight: int64(s.InFlight), Transforms: s.Transforms, Failures: s.FailuresTotal}
		}
		return out
	}
}
