package httpserve

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"time"
)

// DebugServer returns the server of a debug listener (coffer serve --debug-listen):
// net/http/pprof's handlers under /debug/pprof/ and nothing else. It belongs on an
// address of its own, never one that clients or scrapers reach.
func DebugServer(log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No WriteTimeout: a CPU profile or a trace answers after its ?seconds=.
	return &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
}
