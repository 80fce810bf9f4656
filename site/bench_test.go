package site

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/coffer/coffer/site/audit"
)

// oneObjectEdge answers every Get with the same object, rewound: the cost of
// the edge itself stays out of the handler's figures.
type oneObjectEdge struct {
	memEdge
	obj *Object
	r   *bytes.Reader
}

func (e *oneObjectEdge) Get(context.Context, EdgeRequest) (*Object, error) {
	e.r.Seek(0, io.SeekStart)
	return e.obj, nil
}

// discardWriter is a ResponseWriter that keeps nothing, reused across requests.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkServeHit serves an edge HIT (2 KiB JSON, identity) through Serve
// with the audit log on, the request and writer reused: allocs/op is the
// handler's own.
func BenchmarkServeHit(b *testing.B) {
	c := compileDoc(b, testSiteDoc)
	body := bytes.Repeat([]byte("x"), 2048)
	r := bytes.NewReader(body)
	edge := &oneObjectEdge{r: r, obj: &Object{Content: r, Size: int64(len(body)), ETag: `"e"`, Type: "application/json",
		ModTime: time.Unix(1700000000, 0), Cache: CacheHit}}
	var last audit.Record
	h := NewHandler(HandlerConfig{Edge: edge, Audit: func(r *audit.Record) { last = *r }})
	req := httptest.NewRequest("GET", "/api/users", nil)
	w := &discardWriter{h: http.Header{}}
	sr := Request{Tenant: "t1", Site: c, Client: "127.0.0.1", RequestID: "r"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clear(w.h)
		h.Serve(w, req, sr)
	}
	b.StopTimer()
	if last.Status != 200 || last.Bytes != int64(len(body)) || last.Cache != "HIT" {
		b.Fatalf("last record %+v", last)
	}
}

// BenchmarkCompressLevels compresses a real bundle (jQuery, 283 KiB) at the
// levels considered, reporting the ratio (compressed/original) and MB/s.
func BenchmarkCompressLevels(b *testing.B) {
	src, err := os.ReadFile("/usr/share/javascript/jquery/jquery.js")
	if err != nil {
		b.Skip("no jquery.js on this machine:", err)
	}
	for _, c := range []struct {
		name string
		mk   func(io.Writer) io.WriteCloser
	}{
		{"br-5", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, 5) }},
		{"br-9", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, 9) }},
		{"br-11", func(w io.Writer) io.WriteCloser { return brotli.NewWriterLevel(w, 11) }},
		{"zstd-default", zstdAt(zstd.SpeedDefault)},
		{"zstd-best", zstdAt(zstd.SpeedBestCompression)},
		{"gzip-6", gzipAt(6)},
		{"gzip-9", gzipAt(9)},
	} {
		b.Run(c.name, func(b *testing.B) {
			var out bytes.Buffer
			b.SetBytes(int64(len(src)))
			for i := 0; i < b.N; i++ {
				out.Reset()
				w := c.mk(&out)
				w.Write(src)
				w.Close()
			}
			b.ReportMetric(float64(out.Len())/float64(len(src)), "ratio")
		})
	}
}

func zstdAt(l zstd.EncoderLevel) func(io.Writer) io.WriteCloser {
	return func(w io.Writer) io.WriteCloser {
		z, _ := zstd.NewWriter(w, zstd.WithEncoderLevel(l), zstd.WithEncoderConcurrency(1))
		return z
	}
}

func gzipAt(l int) func(io.Writer) io.WriteCloser {
	return func(w io.Writer) io.WriteCloser {
		z, _ := gzip.NewWriterLevel(w, l)
		return z
	}
}
