package edge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/site"
)

// defaultOriginTimeout bounds an origin request until its headers arrive, and
// every gap between body reads, when the site sets no timeout.
const defaultOriginTimeout = 10 * time.Second

// HTTPOrigin fetches keys from an HTTP(S) server: key "a/b c.js" is GET
// <URL>/a/b%20c.js. It follows no redirects: a 3xx is an origin error (served
// stale-if-error), since following one would let an origin send the edge to
// another host, and caching it under the key would be wrong anyway.
type HTTPOrigin struct {
	base    *url.URL
	headers http.Header
	timeout time.Duration
	client  *http.Client
	id      string
}

var _ site.Origin = (*HTTPOrigin)(nil)

// NewHTTPOrigin returns the origin o over client (production passes one whose
// transport is the webhook SSRF guard). The client's redirect policy is
// replaced by "never follow" on a copy; its own Timeout should be 0 (the
// origin's Timeout bounds headers and stalls instead).
func NewHTTPOrigin(o site.HTTPOrigin, client *http.Client) (*HTTPOrigin, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, coffer.InvalidField("url", "an HTTP origin's url is http(s)://host[:port][/base/] without credentials or query")
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawPath = ""
	h := http.Header{}
	for k, v := range o.Headers {
		h.Set(k, v)
	}
	if client == nil {
		client = http.DefaultClient
	}
	cl := *client
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	t := o.Timeout.D()
	if t <= 0 {
		t = defaultOriginTimeout
	}
	return &HTTPOrigin{base: u, headers: h, timeout: t, client: &cl, id: httpOriginID(u, o.Headers)}, nil
}

// httpOriginID is the base URL and a digest of the headers (which may hold a
// token, never shown).
func httpOriginID(u *url.URL, headers map[string]string) string {
	keys := make([]string, 0, len(headers))
	for k := range headers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(d, "%s\x00%s\x00", http.CanonicalHeaderKey(k), headers[k])
	}
	return "http:" + u.String() + "#" + hex.EncodeToString(d.Sum(nil)[:8])
}

// ID implements site.Origin.
func (o *HTTPOrigin) ID() string { return o.id }

// KeyURL returns the URL key maps to: each segment path-escaped. Keys with
// "." or ".." segments, NUL or backslashes are EINVALID.
func (o *HTTPOrigin) KeyURL(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	segs := strings.Split(strings.TrimPrefix(key, "/"), "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return o.base.String() + strings.Join(segs, "/"), nil
}

// checkKey refuses keys that could climb out of an origin's base.
func checkKey(key string) error {
	if strings.ContainsAny(key, "\x00\\") {
		return coffer.Errorf(coffer.EINVALID, "an origin key holds a NUL or a backslash")
	}
	for _, s := range strings.Split(strings.TrimPrefix(key, "/"), "/") {
		if s == "." || s == ".." {
			return coffer.Errorf(coffer.EINVALID, "an origin key holds a %q segment", s)
		}
	}
	return nil
}

// Fetch implements site.Origin: 200 with a body; 304; 404 (and 410) as 404; any
// other status, a transport error or the timeout is an error.
func (o *HTTPOrigin) Fetch(ctx context.Context, key, ifNoneMatch string, ifModifiedSince time.Time) (*site.Fetched, error) {
	u, err := o.KeyURL(key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	w := newWatchdog(o.timeout, cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		w.stop()
		return nil, err
	}
	o.prepare(req, ifNoneMatch, ifModifiedSince)
	resp, err := o.client.Do(req)
	if err != nil {
		w.stop()
		if c := context.Cause(ctx); c != nil && errors.Is(err, context.Canceled) {
			err = c
		}
		return nil, err
	}
	return o.answer(resp, w, ctx)
}

// prepare sets the request's headers.
func (o *HTTPOrigin) prepare(req *http.Request, inm string, ims time.Time) {
	for k, v := range o.headers {
		req.Header[k] = v
	}
	if inm != "" {
		req.Header.Set("If-None-Match", inm)
	}
	if !ims.IsZero() {
		req.Header.Set("If-Modified-Since", ims.UTC().Format(http.TimeFormat))
	}
}

// answer turns resp into a Fetched whose body is guarded by w.
func (o *HTTPOrigin) answer(resp *http.Response, w *watchdog, ctx context.Context) (*site.Fetched, error) {
	f := &site.Fetched{Status: resp.StatusCode, Header: resp.Header, Size: resp.ContentLength}
	switch resp.StatusCode {
	case http.StatusOK:
		w.reset()
		f.Body = &watchedBody{rc: resp.Body, w: w, ctx: ctx}
		return f, nil
	case http.StatusNotModified, http.StatusNotFound, http.StatusGone:
		resp.Body.Close()
		w.stop()
		if f.Status == http.StatusGone {
			f.Status = http.StatusNotFound
		}
		f.Size = 0
		return f, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	w.stop()
	return nil, fmt.Errorf("edge: the origin answered %s", resp.Status)
}

// errStalled is the cause of an origin request cut by its watchdog.
var errStalled = errors.New("edge: the origin stalled longer than its timeout")

// watchdog cancels a request when no progress was made for its timeout: until
// the headers, then between body reads. stop ends the request's context too
// (it is a child of the cache's long-lived one and must not pile up there).
type watchdog struct {
	t      *time.Timer
	d      time.Duration
	cancel context.CancelCauseFunc
}

func newWatchdog(d time.Duration, cancel context.CancelCauseFunc) *watchdog {
	return &watchdog{d: d, cancel: cancel, t: time.AfterFunc(d, func() { cancel(errStalled) })}
}

func (w *watchdog) reset() { w.t.Reset(w.d) }

func (w *watchdog) stop() {
	w.t.Stop()
	w.cancel(nil)
}

// watchedBody resets its watchdog on every read; a read cut by it fails with
// errStalled.
type watchedBody struct {
	rc  io.ReadCloser
	w   *watchdog
	ctx context.Context
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		if c := context.Cause(b.ctx); c != nil {
			err = c
		}
		return n, err
	}
	if err == nil {
		b.w.reset()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.w.stop()
	return b.rc.Close()
}
