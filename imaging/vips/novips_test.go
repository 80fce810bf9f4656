//go:build novips

package vips

import (
	"context"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

func TestNoVipsAnswersNotImplemented(t *testing.T) {
	e, err := New(imaging.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Transform(context.Background(), strings.NewReader("x"), imaging.Options{Width: 10})
	if coffer.ErrorCode(err) != coffer.ENOTIMPLEMENTED || !strings.Contains(err.Error(), "-tags novips") {
		t.Errorf("Transform = %v, want ENOTIMPLEMENTED naming the build tag", err)
	}
	if e.Supports(imaging.JPEG) {
		t.Error("Supports(JPEG) = true")
	}
	if _, err := New(imaging.Config{}); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("New(zero config) = %v, want EINVALID", err)
	}
}
