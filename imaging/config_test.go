package imaging

import (
	"bytes"
	"errors"
	"image"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/coffer/coffer"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		msg  string
	}{
		{"default", func(*Config) {}, ""},
		{"no queue", func(c *Config) { c.Queue = 0 }, ""},
		{"workers", func(c *Config) { c.Workers = 0 }, "workers"},
		{"queue", func(c *Config) { c.Queue = -1 }, "queue"},
		{"bytes", func(c *Config) { c.MaxSourceBytes = 0 }, "source bytes"},
		{"pixels", func(c *Config) { c.MaxSourcePixels = -1 }, "source pixels"},
		{"output", func(c *Config) { c.MaxOutputPixels = 0 }, "output pixels"},
		{"frames", func(c *Config) { c.MaxFrames = 0 }, "frames"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.edit(&c)
		err := c.Validate()
		if tt.msg == "" && err != nil || tt.msg != "" && (coffer.ErrorCode(err) != coffer.EINVALID || !strings.Contains(err.Error(), tt.msg)) {
			t.Errorf("%s: Validate = %v, want %q", tt.name, err, tt.msg)
		}
	}
}

func TestCheckSource(t *testing.T) {
	c := DefaultConfig()
	tests := []struct {
		h    Header
		code string
	}{
		{Header{Width: 5000, Height: 10000, Frames: 1}, ""},
		{Header{Width: 5001, Height: 10000, Frames: 1}, coffer.ETOOLARGE},
		{Header{Width: 100000, Height: 100000}, coffer.ETOOLARGE},
		{Header{Width: 1, Height: 1, Frames: 100}, ""},
		{Header{Width: 1, Height: 1, Frames: 101}, coffer.ETOOLARGE},
		{Header{Width: 0, Height: 1}, coffer.EUNSUPPORTED},
	}
	for _, tt := range tests {
		if got := coffer.ErrorCode(c.CheckSource(tt.h)); got != tt.code {
			t.Errorf("CheckSource(%+v) = %q, want %q", tt.h, got, tt.code)
		}
	}
	if w, h := (Header{Width: 3, Height: 2, Orientation: 6}).Oriented(); w != 2 || h != 3 {
		t.Errorf("Oriented with orientation 6 = %dx%d", w, h)
	}
	if w, h := (Header{Width: 3, Height: 2, Orientation: 3}).Oriented(); w != 3 || h != 2 {
		t.Errorf("Oriented with orientation 3 = %dx%d", w, h)
	}
}

func TestCheckPlan(t *testing.T) {
	c := Config{MaxOutputPixels: 10_000}
	ok := Options{Width: 100, Height: 100, Fit: FitFill}.Plan(10, 10)
	tooBig := Options{Width: 100, Height: 1, Fit: FitCover}.Plan(9, 10) // resized to 100×111, then cropped to 100×1
	if err := c.CheckPlan(ok); err != nil {
		t.Errorf("CheckPlan(100x100) = %v", err)
	}
	if err := c.CheckPlan(tooBig); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("CheckPlan(%+v) = %v, want EINVALID", tooBig, err)
	}
	if px := (Plan{Resize: image.Pt(8192, 8192), Canvas: image.Pt(1, 1)}).Pixels(); px != 8192*8192 {
		t.Errorf("Pixels = %d", px)
	}
}

func TestReadSource(t *testing.T) {
	c := Config{MaxSourceBytes: 10}
	tests := []struct {
		name string
		src  io.Reader
		hint int64
		want string
		code string
	}{
		{"fits", strings.NewReader("0123456789"), 10, "0123456789", ""},
		{"no hint", iotest.OneByteReader(strings.NewReader("abc")), 0, "abc", ""},
		{"wrong hint", strings.NewReader("abc"), 1 << 40, "abc", ""},
		{"too large", strings.NewReader("0123456789x"), 11, "", coffer.ETOOLARGE},
		{"read error", iotest.ErrReader(errors.New("disk on fire")), 0, "", coffer.EINTERNAL},
	}
	for _, tt := range tests {
		got, err := c.ReadSource(tt.src, tt.hint)
		if coffer.ErrorCode(err) != tt.code || !bytes.Equal(got, []byte(tt.want)) {
			t.Errorf("%s: ReadSource = %q, %v; want %q, %q", tt.name, got, err, tt.want, tt.code)
		}
	}
}
