//go:build !novips

package vips

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	govips "github.com/davidbyttow/govips/v2/vips"
)

// expensive is a source and options that take seconds of CPU (a σ100 blur of a
// 2000×2000 canvas; Cost ≈ 5e9), and a config whose limits let it run.
func expensive(t testing.TB) ([]byte, imaging.Options, imaging.Config) {
	cfg := imaging.DefaultConfig()
	cfg.Workers, cfg.UserWorkers, cfg.MaxCost, cfg.Timeout = 1, 1, 1<<62, time.Hour
	return encodeJPEG(gradient(2000, 2000, false, 7), 85), imaging.Options{Width: 2000, Height: 2000, Fit: imaging.FitFill, Blur: 100}, cfg
}

// The field kill.go reads out of govips.ImageRef is the image libvips computes:
// killing it makes the export fail. A govips that renames or retypes the field
// fails here (and libvips refuses to start).
func TestImageFieldIsTheVipsImage(t *testing.T) {
	if _, err := start(); err != nil {
		t.Fatal(err)
	}
	ref, err := govips.LoadImageFromBuffer(encodeJPEG(gradient(64, 64, false, 1), 80), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	var k killer
	k.track(ref)
	defer k.release()
	if len(k.imgs) != 1 || k.imgs[0] == nil {
		t.Fatalf("tracked %d images", len(k.imgs))
	}
	k.kill()
	if _, _, err := ref.ExportJpeg(nil); err == nil {
		t.Fatal("export of a killed image succeeded")
	}
}

// A transformation whose context ends stops computing at once: Transform returns
// ctx's error within a second, the process's CPU stops growing within 100 ms, and
// the worker is free for the next transformation (before the fix, libvips went on
// encoding for seconds and the cancelled transform returned a result).
func TestCancelStopsLibvips(t *testing.T) {
	src, o, cfg := expensive(t)
	e := newEngine(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := e.Transform(ctx, bytes.NewReader(src), o); errc <- err }()
	time.Sleep(500 * time.Millisecond) // into the encoder
	cancel()
	cancelled := time.Now()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled transformation still running after 5 s")
	}
	t.Logf("returned %v after cancel", time.Since(cancelled))
	time.Sleep(time.Until(cancelled.Add(100 * time.Millisecond)))
	before := cpuTime(t, syscall.RUSAGE_SELF)
	time.Sleep(500 * time.Millisecond)
	if grew := cpuTime(t, syscall.RUSAGE_SELF) - before; grew > 50*time.Millisecond {
		t.Errorf("CPU grew by %v in the 500 ms after cancel+100ms", grew)
	}
}

// A transformation running past cfg.Timeout is killed: EUNAVAILABLE naming the
// limit and its flag, long before it would have finished.
func TestTimeoutKillsTransform(t *testing.T) {
	src, o, cfg := expensive(t)
	cfg.Timeout = 300 * time.Millisecond
	e := newEngine(t, cfg)
	start := time.Now()
	_, err := transform(t, e, src, o)
	if coffer.ErrorCode(err) != coffer.EUNAVAILABLE || !strings.Contains(coffer.ErrorMessage(err), "--image-timeout") {
		t.Fatalf("err = %v, want EUNAVAILABLE naming --image-timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("timed-out transformation took %v", d)
	}
	if _, err := transform(t, e, encodeJPEG(gradient(64, 64, false, 1), 80), imaging.Options{Width: 16}); err != nil {
		t.Errorf("next transformation: %v", err)
	}
}

// The cost budget refuses expensive transformations before any pixel work (400
// naming the flag) and lets ordinary thumbnails through.
func TestCostBudget(t *testing.T) {
	src, o, _ := expensive(t)
	e := newEngine(t, imaging.DefaultConfig())
	start := time.Now()
	_, err := transform(t, e, src, o)
	if coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(coffer.ErrorMessage(err), "--image-max-cost") {
		t.Fatalf("err = %v, want EINVALID naming --image-max-cost", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("refusal took %v: was pixel work done?", d)
	}
	if _, err := transform(t, e, src, imaging.Options{Width: 800, Blur: 2}); err != nil {
		t.Errorf("ordinary thumbnail: %v", err)
	}
}
