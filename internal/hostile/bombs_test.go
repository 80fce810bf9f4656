package hostile

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/coffer/coffer/imaging/imagingtest"
)

// source is one image source uploaded for the bomb corpus.
type source struct {
	name, ctype string
	data        []byte
}

// bombSources returns hostile image sources generated in code: declared sizes and
// frame counts far over the limits, truncated and empty files, wrong magic numbers,
// and large zero-filled images just within the limits.
func bombSources(t *testing.T) []source {
	jpg := imagingtest.JPEG(16, 16)
	huge, err := imagingtest.PatchJPEGSize(jpg, 65500, 65500)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 5))
	noise := make([]byte, 4096)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	gif := imagingtest.AnimatedGIF(1, 1, 1)
	return []source{
		{"png-100000x100000", "image/png", imagingtest.PNG(100000, 100000, false, 2)},
		{"png-65535x65535-interlaced", "image/png", imagingtest.PNG(65535, 65535, true, 2)},
		{"png-1x50000000", "image/png", imagingtest.PNG(1, 50000000, false, 2)},
		{"jpeg-65500x65500", "image/jpeg", huge},
		{"gif-1000-frames", "image/gif", imagingtest.AnimatedGIF(1, 1, 1000)},
		{"gif-screen-65535x65535", "image/gif", imagingtest.PatchGIFScreen(gif, 65535, 65535)},
		{"png-7000x7000-zeros", "image/png", imagingtest.PNG(7000, 7000, false, 0)},
		{"jpeg-truncated", "image/jpeg", jpg[:len(jpg)/2]},
		{"jpeg-header-only", "image/jpeg", jpg[:min(len(jpg), 200)]},
		{"png-truncated", "image/png", imagingtest.PNG(64, 64, false, 0)[:40]},
		{"gif-truncated", "image/gif", gif[:len(gif)-4]},
		{"empty", "image/png", nil},
		{"png-magic-then-noise", "image/png", append([]byte("\x89PNG\r\n\x1a\n"), noise...)},
		{"jpeg-magic-then-noise", "image/jpeg", append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, noise...)},
		{"gif-magic-then-noise", "image/gif", append([]byte("GIF89a"), noise...)},
		{"noise", "image/jpeg", noise},
		{"text-declared-png", "image/png", []byte("not an image at all")},
		{"svg-huge", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1000000" height="1000000"><rect width="100%" height="100%"/></svg>`)},
		{"svg-entity-bomb", "image/svg+xml", []byte(`<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><svg xmlns="http://www.w3.org/2000/svg"><text>&c;</text></svg>`)},
	}
}

// bombParams are the transformations asked of each source.
var bombParams = []string{"w=100", "w=64&h=64&fit=cover", "f=webp&w=50", "b=5&w=32", "w=5000&h=5000&fit=fill", "q=1&f=png"}

// TestBombCorpus transforms every source of the bomb corpus several ways through
// the API: each answer is a success or a 4xx (or a 503 with Retry-After), never
// another 5xx, and afterwards a cheap transformation still succeeds.
func TestBombCorpus(t *testing.T) {
	s := newServer(t)
	if !s.images {
		t.Skip("libvips is not installed (pkg-config vips): coffer-imager cannot be built")
	}
	tl := s.tally("bombs")
	cheap := s.mustUpload("alice", "priv", "cheap.jpg", imagingtest.JPEG(16, 16))
	for _, src := range bombSources(t) {
		body, ctype := multipartBody(part{field: "bucket-id", body: []byte("priv")},
			part{field: "file[]", filename: src.name, ctype: src.ctype, body: src.data})
		a := s.do("POST", "/v1/files", body, append(as("alice"), "Content-Type", ctype)...)
		tl.probe("upload "+src.name, a, "")
		fs := uploaded(a)
		if len(fs) != 1 {
			continue
		}
		for _, p := range bombParams {
			a := s.do("GET", "/v1/files/"+fs[0].ID+"?"+p, nil, as("alice")...)
			tl.probe(fmt.Sprintf("%s?%s", src.name, p), a, "")
		}
	}
	a := s.do("GET", "/v1/files/"+cheap+"?w=9", nil, as("alice")...)
	wrong := ""
	if a.status != http.StatusOK || !bytes.HasPrefix(a.body, []byte{0xFF, 0xD8}) {
		wrong = "a cheap transformation after the corpus failed"
	}
	tl.probe("cheap after the corpus", a, wrong)
}
