package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// newTransport returns an HTTP/1.1 transport sized for conns concurrent requests:
// every worker keeps its connection alive, nothing is compressed and no proxy from
// the environment is used.
func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: max(conns, 2) + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		WriteBufferSize:     32 << 10,
		ReadBufferSize:      32 << 10,
	}
}

// newClient returns a client that does not follow redirects (a 3xx is an outcome).
func newClient(tr http.RoundTripper, timeout time.Duration) *http.Client {
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// credentials are the auth headers of every request.
type credentials struct {
	adminSecret string
	token       string
}

func (c credentials) apply(h http.Header) {
	if c.adminSecret != "" {
		h.Set("X-Hasura-Admin-Secret", c.adminSecret)
	}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
}

// classify maps a transport error to its kind.
func classify(err error) errKind {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return kindTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, net.ErrClosed):
		return kindConn
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return kindConn
	}
	return kindOther
}

// drain reads r to its end into buf, counting the bytes.
func drain(r io.Reader, buf []byte) (int64, error) {
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// download GETs one URL and discards the body. Each worker has its own, reusing one
// request.
type download struct {
	client *http.Client
	req    *http.Request
}

func newDownload(ctx context.Context, client *http.Client, url string, cred credentials) (*download, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	cred.apply(req.Header)
	return &download{client: client, req: req}, nil
}

func (d *download) do(_ context.Context, w *workerState, start time.Time) outcome {
	resp, err := d.client.Do(d.req)
	if err != nil {
		return outcome{kind: classify(err), latency: time.Since(start)}
	}
	o := outcome{status: resp.StatusCode, kind: statusKind(resp.StatusCode), ttfb: max(time.Since(start), 1)}
	n, err := drain(resp.Body, w.buf)
	resp.Body.Close()
	o.bytes, o.latency = n, max(time.Since(start), 1)
	if err != nil {
		o.kind = classify(err)
	}
	return o
}
