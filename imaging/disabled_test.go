package imaging_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
)

func TestDisabled(t *testing.T) {
	d := imaging.NewDisabled("no image worker")
	_, err := d.Transform(context.Background(), strings.NewReader("x"), imaging.Options{Width: 1})
	if coffer.ErrorCode(err) != coffer.ENOTIMPLEMENTED || !strings.Contains(coffer.ErrorMessage(err), "no image worker") {
		t.Errorf("Transform: %v", err)
	}
	if d.Supports(imaging.JPEG) || d.Pool().Workers() != 1 {
		t.Error("Supports or Pool")
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}
}
