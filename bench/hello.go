package bench

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// helloBody is the tiny response of ServeHello.
const helloBody = "hello\n"

// ServeHello serves a 6-byte "hello\n" on every path at ln until ctx is done: the
// cheapest possible target, for measuring the generator's own overhead (against
// wrk on the same machine).
func ServeHello(ctx context.Context, ln net.Listener) error {
	body := []byte(helloBody)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write(body)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
