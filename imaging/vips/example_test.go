//go:build !novips

package vips_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"log"
	"net/url"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/vips"
)

func Example() {
	e, err := vips.New(imaging.DefaultConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()

	var src bytes.Buffer // a 400×300 PNG
	if err := png.Encode(&src, image.NewGray(image.Rect(0, 0, 400, 300))); err != nil {
		log.Fatal(err)
	}
	q, _ := url.ParseQuery("w=200&f=auto&b=1.5")
	o, err := imaging.Parse(q)
	if err != nil {
		log.Fatal(err) // EINVALID: answer 400
	}
	o, vary := o.NegotiateFor("image/webp,*/*", "image/png", e.Supports)
	res, err := e.Transform(context.Background(), &src, o)
	if err != nil {
		log.Fatal(err) // EUNSUPPORTED, ETOOLARGE, EUNAVAILABLE (imaging.ErrBusy), ...
	}
	fmt.Println(res.MIME(), res.Width, res.Height, vary, o.Canonical())
	// Output: image/webp 200 150 true b=1.5&f=webp&q=80&w=200
}
