package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"sync"
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

// upload POSTs a multipart upload of a generated file and records the new file's id
// in created. The worker goes on to its next upload at once: the files are deleted
// after the run (endpointRun.deleteUploads), so no DELETE is timed into an upload or
// takes a worker's time while the run is measured.
type upload struct {
	api     *apiClient
	bucket  string
	fixture Fixture
	created *idList
}

// idList is a list of file ids safe for concurrent use.
type idList struct {
	mu  sync.Mutex
	ids []string
}

func (l *idList) add(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
}

// take returns the ids and empties the list.
func (l *idList) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.ids
	l.ids = nil
	return ids
}

func (u *upload) do(ctx context.Context, w *workerState, start time.Time) outcome {
	w.seq++
	name := "bench-upload-" + strconv.Itoa(w.id) + "-" + strconv.Itoa(w.seq) + "-" + u.fixture.Name
	body, ctype, size := multipartBody(u.bucket, name, u.fixture)
	defer body.Close()
	resp, err := u.api.send(ctx, http.MethodPost, "/v1/files", body, ctype, size)
	if err != nil {
		return outcome{kind: classify(err), latency: time.Since(start)}
	}
	o := outcome{status: resp.StatusCode, kind: statusKind(resp.StatusCode), ttfb: max(time.Since(start), 1)}
	var out struct {
		ProcessedFiles []struct {
			ID string `json:"id"`
		} `json:"processedFiles"`
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&out)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	o.latency = max(time.Since(start), 1)
	if o.kind == kindOK {
		o.bytes = max(u.fixture.Size, 0) // payload bytes, without the multipart framing
		if err != nil || len(out.ProcessedFiles) != 1 {
			o.kind = kindOther
		} else {
			u.created.add(out.ProcessedFiles[0].ID)
		}
	}
	return o
}

// multipartBody streams an upload form: bucket-id first, then one file[] part
// holding the fixture's content. size is the body's length, or -1 when unknown.
func multipartBody(bucket, name string, f Fixture) (io.ReadCloser, string, int64) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("bucket-id", bucket) // writes to memory: cannot fail
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file[]"; filename=%q`, name))
	h.Set("Content-Type", f.ContentType)
	_, _ = mw.CreatePart(h)
	head := bytes.Clone(buf.Bytes())
	buf.Reset()
	_ = mw.Close()
	tail := bytes.Clone(buf.Bytes())
	content := f.Open()
	size := int64(-1)
	if f.Size >= 0 {
		size = int64(len(head)) + f.Size + int64(len(tail))
	}
	r := io.MultiReader(bytes.NewReader(head), content, bytes.NewReader(tail))
	return readCloser{Reader: r, Closer: content}, mw.FormDataContentType(), size
}

type readCloser struct {
	io.Reader
	io.Closer
}
