package rpcapi

import (
	"context"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// GetVersion serves ServerService.GetVersion (to anyone, as /v1/version).
func (s *server) GetVersion(_ context.Context, _ *connect.Request[adminv1.GetVersionRequest]) (*connect.Response[adminv1.GetVersionResponse], error) {
	return connect.NewResponse(&adminv1.GetVersionResponse{Version: s.h.cfg.Version}), nil
}

// GetCacheStats serves ServerService.GetCacheStats.
func (s *server) GetCacheStats(ctx context.Context, _ *connect.Request[adminv1.GetCacheStatsRequest]) (*connect.Response[adminv1.GetCacheStatsResponse], error) {
	cs, err := s.h.node.CacheStats(principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.GetCacheStatsResponse{Caches: make([]*adminv1.CacheStats, len(cs))}
	for i, c := range cs {
		out.Caches[i] = &adminv1.CacheStats{Name: c.Name, Hits: c.Hits, Misses: c.Misses, Evictions: c.Evictions}
	}
	return connect.NewResponse(out), nil
}

// GetImageWorkers serves ServerService.GetImageWorkers.
func (s *server) GetImageWorkers(ctx context.Context, _ *connect.Request[adminv1.GetImageWorkersRequest]) (*connect.Response[adminv1.GetImageWorkersResponse], error) {
	w, err := s.h.node.ImageWorkers(principal(ctx))
	if err != nil {
		return nil, s.h.toConnect(ctx, err)
	}
	out := &adminv1.GetImageWorkersResponse{Enabled: w.Enabled, Workers: int32(w.Workers),
		Busy: int32(w.Busy), Queued: int32(w.Queued), QueueLimit: int32(w.QueueLimit), WorkerStarts: w.Starts}
	for _, r := range w.Remote {
		out.RemoteWorkers = append(out.RemoteWorkers, &adminv1.RemoteImageWorker{Addr: r.Addr, Healthy: r.Healthy,
			InFlight: int32(r.InFlight), Transforms: r.Transforms, Failures: int32(r.Failures),
			FailuresTotal: r.FailuresTotal, LastError: r.LastError})
	}
	return connect.NewResponse(out), nil
}
