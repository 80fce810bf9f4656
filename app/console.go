package app

import (
	"net/http"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/console"
	"github.com/coffer/coffer/internal/httpserve"
)

// buildConsole builds the web console's face with --console (none without): one
// for every tenant, since it holds only the embedded assets and the page calls the
// APIs of the host it was loaded from. It runs in its own Frame, as the other faces
// do: request ids, metrics (route "/console/"), the access log, deadlines.
func (s *Main) buildConsole() error {
	if !s.cfg.Console {
		return nil
	}
	con, err := console.New(console.DefaultConfig())
	if err != nil {
		return err
	}
	h := s.hcfg
	route := con.Prefixes()[0]
	frame := &httpserve.Frame{
		Routes: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			con.ServeHTTP(httpserve.Routed(w, r, route), r)
		}),
		Encode: httpserve.PlainText, IDs: httpserve.NewIDs(), Log: s.log, Access: httpserve.NewAccessLog(h.AccessLog, s.log),
		ReadIdleTimeout: h.ReadIdleTimeout, WriteTimeout: h.WriteTimeout, MinWriteRate: h.MinWriteRate,
	}
	if h.Metrics != nil {
		frame.Begin = h.Metrics.Begin
	}
	s.console, s.consoleFrame = con, &consoleFrame{frame: frame, prefixes: con.Prefixes()}
	return nil
}

// consoleFace is the console's face, the same for every tenant; nil when it is off.
func consoleFace(s *Main, _ *graph) (api.Face, error) {
	if s.consoleFrame == nil {
		return nil, nil
	}
	return s.consoleFrame, nil
}

// consoleFrame is the console's handler in its Frame.
type consoleFrame struct {
	frame    *httpserve.Frame
	prefixes []string
}

var (
	_ api.Face    = (*consoleFrame)(nil)
	_ api.Refuser = (*consoleFrame)(nil)
)

// Prefixes implements api.Face.
func (f *consoleFrame) Prefixes() []string { return f.prefixes }

// ServeHTTP implements http.Handler.
func (f *consoleFrame) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.frame.ServeHTTP(w, r) }

// Refuse implements api.Refuser: the console's page and assets are refused in plain
// text (its API calls go to /v1 and the RPC face, which refuse in their own formats).
func (f *consoleFrame) Refuse(w http.ResponseWriter, _ *http.Request, err error) {
	httpserve.PlainText(w, httpserve.StatusOf(err), coffer.ErrorMessage(err))
}
