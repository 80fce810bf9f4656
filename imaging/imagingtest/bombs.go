// Package imagingtest generates hostile image sources in code for tests: files that
// declare huge sizes or frame counts in a few bytes (decompression bombs), shared by
// the libvips engine's tests and the hostile-input suite, so no binary fixtures are
// needed. The encoders write to memory and fail only on a bug: they panic.
// It also builds and starts coffer-imager for tests (BuildImager, StartImager), with
// peers that hold its connections silent (imager.go), and issues TLS certificates.
package imagingtest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"os/exec"
	"path/filepath"
)

// PNG writes a w×h greyscale PNG of zeros; rows limits how many rows the IDAT holds
// (0 = all), so that a bomb's declared size costs no time to build.
func PNG(w, h int, interlaced bool, rows int) []byte {
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	passes := [][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}
	if !interlaced {
		passes = [][4]int{{0, 0, 1, 1}}
	}
	for _, p := range passes {
		cols, n := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if rows > 0 {
			n = min(n, rows)
		}
		row := make([]byte, 1+cols) // filter byte 0, then zeros
		for range n {
			zw.Write(row)
		}
	}
	zw.Close()
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 0 // 8-bit greyscale
	if interlaced {
		ihdr[12] = 1
	}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = pngChunk(out, "IHDR", ihdr)
	out = pngChunk(out, "IDAT", idat.Bytes())
	return pngChunk(out, "IEND", nil)
}

func pngChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	body := append([]byte(typ), data...)
	out = append(out, body...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(body))
}

// JPEG returns a small baseline w×h JPEG of a colour ramp.
func JPEG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / max(w, 1)), uint8(y * 255 / max(h, 1)), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 80}); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// PatchJPEGSize rewrites the frame size in the SOF0 segment of a baseline JPEG.
func PatchJPEGSize(jpg []byte, w, h uint16) ([]byte, error) {
	out := bytes.Clone(jpg)
	i := bytes.Index(out, []byte{0xFF, 0xC0})
	if i < 0 || i+9 > len(out) {
		return nil, errors.New("imagingtest: no SOF0 marker")
	}
	binary.BigEndian.PutUint16(out[i+5:], h)
	binary.BigEndian.PutUint16(out[i+7:], w)
	return out, nil
}

// PatchGIFScreen rewrites the logical screen size of a GIF.
func PatchGIFScreen(g []byte, w, h uint16) []byte {
	out := bytes.Clone(g)
	binary.LittleEndian.PutUint16(out[6:], w)
	binary.LittleEndian.PutUint16(out[8:], h)
	return out
}

// AnimatedGIF returns a GIF of frames w×h frames.
func AnimatedGIF(w, h, frames int) []byte {
	g := &gif.GIF{}
	pal := color.Palette{color.Black, color.White, color.RGBA{255, 0, 0, 255}}
	for i := range frames {
		f := image.NewPaletted(image.Rect(0, 0, w, h), pal)
		f.SetColorIndex(i%w, 0, uint8(1+i%2))
		g.Image = append(g.Image, f)
		g.Delay = append(g.Delay, 1)
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, g); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// BuildImager builds cmd/coffer-imager into dir and returns its path, or "" (and no
// error) when libvips is not installed (pkg-config vips), so tests can skip.
func BuildImager(dir string) (string, error) {
	if exec.Command("pkg-config", "--exists", "vips").Run() != nil {
		return "", nil
	}
	path := filepath.Join(dir, "coffer-imager")
	out, err := exec.Command("go", "build", "-o", path, "github.com/coffer/coffer/cmd/coffer-imager").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build coffer-imager: %v\n%s", err, out)
	}
	return path, nil
}
