package remote

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
)

// recordEngine is an in-process engine that records the options it is asked for and
// answers without reading its source.
type recordEngine struct {
	called bool
	got    imaging.Options
}

func (e *recordEngine) Transform(_ context.Context, _ io.Reader, o imaging.Options) (*imaging.Result, error) {
	e.called, e.got = true, o
	return &imaging.Result{Data: []byte("result"), Format: imaging.JPEG, Width: 1, Height: 1}, nil
}
func (e *recordEngine) Supports(f imaging.Format) bool { return f == imaging.JPEG }
func (e *recordEngine) Pool() *imaging.Pool            { return nil }
func (e *recordEngine) Close() error                   { return nil }

// serveOne runs Serve in process on one request with this transform string and
// returns the worker's response and the engine, which says what reached it.
func serveOne(t *testing.T, transform string) (*imagerpc.Response, *recordEngine) {
	t.Helper()
	var in, out bytes.Buffer
	fw := &frameWriter{w: &in}
	req := &imagerpc.Request{Transform: transform, SizeHint: 1}
	for _, f := range []*imagerpc.Frame{
		{Id: 1, Body: &imagerpc.Frame_Request{Request: req}},
		{Id: 1, Body: &imagerpc.Frame_Chunk{Chunk: &imagerpc.Chunk{Data: []byte("x"), Last: true}}},
	} {
		if err := fw.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
	e := &recordEngine{}
	if err := Serve(&in, &out, e, 1<<20, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	fr := &frameReader{r: &out}
	for f := (&imagerpc.Frame{}); ; {
		if err := fr.ReadFrame(f); err != nil {
			t.Fatalf("no response from Serve: %v", err)
		}
		if h := f.GetHello(); h != nil && h.GetProtocol() != protocol {
			t.Fatalf("Serve says protocol %d, want %d", h.GetProtocol(), protocol)
		}
		if r := f.GetResponse(); r != nil {
			return r, e
		}
	}
}

func TestServeParsesTheCanonicalTransform(t *testing.T) {
	for _, o := range []imaging.Options{
		{}, opts, {Width: 10}, {Width: 400, Blur: 2, Format: imaging.WebP},
		{Width: 30, Height: 20, Fit: imaging.FitContain, Format: imaging.FormatAuto, Quality: 55},
		{Height: 8192, Gravity: imaging.GravityEntropy, Blur: 0.25},
		{Width: 7, Height: 9, Gravity: imaging.GravityAttention, Format: imaging.AVIF, Quality: 1},
	} {
		resp, e := serveOne(t, o.Canonical())
		if resp.GetError() != nil || !e.called || e.got != o.Normalize() {
			t.Errorf("%+v: engine got %+v (called %v), want %+v; error %v", o, e.got, e.called, o.Normalize(), resp.GetError())
		}
	}
}

// TestServeRefusesNonCanonicalTransform: the worker answers EINVALID to anything
// but the exact string Canonical writes, and the engine never sees it.
func TestServeRefusesNonCanonicalTransform(t *testing.T) {
	for _, s := range []string{
		"w=10",                 // q=80 left out
		"w=10&q=80",            // keys out of order
		"q=80&w=010",           // leading zero
		"Q=80&W=10",            // upper case keys
		"f=jpg&q=80",           // an alias of jpeg
		"q=80&w=10&x=1",        // an unknown key
		"q=80&w=10&w=11",       // a repeated key
		"q=80&w=0",             // out of range
		"q=80&w=99999",         // out of range
		"b=1e1&q=80",           // not a plain decimal
		"q=80;w=10",            // a semicolon
		"q=80&w=%zz",           // bad escape
		"fit=contain&q=80&w=1", // fit without a height
		"q=80&w=1%ff",          // escaped bytes that are not UTF-8
		" ", "&", "=",
	} {
		resp, e := serveOne(t, s)
		if e.called || resp.GetError().GetCode() != coffer.EINVALID {
			t.Errorf("%q: engine called %v with %+v, response %v; want EINVALID", s, e.called, e.got, resp)
		}
	}
}

// fakeHelloEnv makes the fake worker say Hello with this protocol number and then
// wait for stdin to close.
const fakeHelloEnv = "COFFER_REMOTE_FAKE_HELLO"

// sayHelloOnly is the fake worker of fakeHelloEnv.
func sayHelloOnly(protocol uint32) int {
	hello := &imagerpc.Frame{Body: &imagerpc.Frame_Hello{Hello: &imagerpc.Hello{Protocol: protocol, Formats: []string{"jpeg"}}}}
	if err := (&frameWriter{w: os.Stdout}).WriteFrame(hello); err != nil {
		return 1
	}
	io.Copy(io.Discard, os.Stdin)
	return 0
}

func TestWorkerOfAnotherProtocolIsRefused(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig(exe)
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Env = []string{fakeWorkerEnv + "=1", fakeHelloEnv + "=1"}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "another protocol") {
		t.Errorf("New with a worker of protocol 1: %v", err)
	}
}
