package remote

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

// testJPEG encodes a w×h gradient.
func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{R: uint8(x), G: uint8(y), B: uint8(x ^ y), A: 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRealWorkerRoundTrip(t *testing.T) {
	e := newReal(t, nil)
	if !e.Supports(imaging.JPEG) || !e.Supports(imaging.WebP) {
		t.Fatalf("worker hello lacks JPEG or WebP")
	}
	res, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 400, 300)), imaging.Options{Width: 100, Format: imaging.JPEG})
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(res.Data))
	if err != nil {
		t.Fatalf("result is not a JPEG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 100 || b.Dy() != 75 || res.Width != 100 || res.Height != 75 {
		t.Errorf("result is %v, reported %dx%d; want 100x75", b, res.Width, res.Height)
	}
	var names []string
	for _, s := range res.Steps {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "read,header,resize,crop,blur,encode" {
		t.Errorf("steps = %v", res.Steps)
	}
}

func TestRealWorkerErrorCodes(t *testing.T) {
	e := newReal(t, func(c *Config) { c.Imaging.MaxSourceBytes = 64 << 10 })
	src := testJPEG(t, 400, 300)
	tests := []struct {
		name string
		src  []byte
		o    imaging.Options
		code string
	}{
		{"not an image", []byte("hello, this is text and no image"), imaging.Options{Width: 10}, coffer.EUNSUPPORTED},
		{"damaged PNG", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 100)...), imaging.Options{Width: 10}, coffer.EUNSUPPORTED},
		{"unknown output format", src, imaging.Options{Width: 10, Format: "bmp"}, coffer.EINVALID},
		{"too many bytes", append(bytes.Clone(src), make([]byte, 64<<10)...), imaging.Options{Width: 10}, coffer.ETOOLARGE},
		{"output too large", src, imaging.Options{Width: 8192, Height: 8192, Fit: imaging.FitFill}, coffer.EINVALID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Transform(context.Background(), bytes.NewReader(tt.src), tt.o)
			if codeOf(err) != tt.code {
				t.Errorf("err = %v, want code %s", err, tt.code)
			}
		})
	}
}

func TestRealWorkerPixelLimit(t *testing.T) {
	e := newReal(t, func(c *Config) { c.Imaging.MaxSourcePixels = 1000 })
	_, err := e.Transform(context.Background(), bytes.NewReader(testJPEG(t, 400, 300)), imaging.Options{Width: 10})
	if codeOf(err) != coffer.ETOOLARGE {
		t.Errorf("err = %v, want ETOOLARGE (the limit crossed the boundary)", err)
	}
}

func TestRealWorkerKilledThenRestarts(t *testing.T) {
	e := newReal(t, nil)
	src := testJPEG(t, 400, 300)
	o := imaging.Options{Width: 50, Format: imaging.PNG}
	if _, err := e.Transform(context.Background(), bytes.NewReader(src), o); err != nil {
		t.Fatal(err)
	}
	old := e.workerPID()
	// Killed mid-request: the request's source stalls, so the worker holds the request
	// (its Request frame sent) when it dies.
	pr := &slowReader{data: src, release: make(chan struct{})}
	errc := make(chan error, 1)
	go func() { _, err := e.Transform(context.Background(), pr, o); errc <- err }()
	waitFor(t, func() bool { return e.Pool().Busy() == 1 })
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	close(pr.release)
	select {
	case err := <-errc:
		if codeOf(err) != coffer.EUNAVAILABLE {
			t.Errorf("in-flight transform: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("in-flight transform did not fail")
	}
	if _, err := e.Transform(context.Background(), bytes.NewReader(src), o); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	pid := e.workerPID()
	if pid == old {
		t.Error("worker was not restarted")
	}
	e.Close()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("worker %d still exists after Close (running or a zombie)", pid)
	}
}

// slowReader gives half its data, then blocks until release.
type slowReader struct {
	data    []byte
	off     int
	release chan struct{}
}

func (r *slowReader) Read(p []byte) (int, error) {
	if r.off >= len(r.data)/2 {
		<-r.release
	}
	if r.off >= len(r.data) {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), len(r.data)/2)], r.data[r.off:])
	r.off += n
	return n, nil
}

// SIGINT and SIGTERM (Ctrl-C, systemd stop) reach the worker too; it ignores them and
// ends when the server, done draining, closes its stdin.
func TestRealWorkerOutlivesTermSignals(t *testing.T) {
	e := newReal(t, nil)
	src, o := testJPEG(t, 200, 100), imaging.Options{Width: 20}
	if _, err := e.Transform(context.Background(), bytes.NewReader(src), o); err != nil {
		t.Fatal(err)
	}
	pid := e.workerPID()
	syscall.Kill(pid, syscall.SIGINT)
	syscall.Kill(pid, syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	if _, err := e.Transform(context.Background(), bytes.NewReader(src), o); err != nil || e.workerPID() != pid {
		t.Fatalf("after SIGINT and SIGTERM: %v (pid %d, was %d)", err, e.workerPID(), pid)
	}
}
