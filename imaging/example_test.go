package imaging_test

import (
	"fmt"
	"net/url"

	"github.com/coffer/coffer/imaging"
)

func ExampleParse() {
	q, _ := url.ParseQuery("h=300&w=400&f=AUTO&crop=north&X-Coffer-Signature=abc")
	o, err := imaging.Parse(q)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Canonical())

	// A Chrome-like client gets AVIF; the response varies on Accept.
	o, vary := o.Negotiate("image/avif,image/webp,*/*;q=0.8", "image/jpeg")
	fmt.Println(o.Canonical(), vary)

	_, err = imaging.Parse(url.Values{"w": {"0"}})
	fmt.Println(err)
	// Output:
	// f=auto&fit=cover&gravity=north&h=300&q=80&w=400
	// f=avif&fit=cover&gravity=north&h=300&q=80&w=400 true
	// invalid: invalid w: must be an integer from 1 to 8192
}

func ExampleOptions_Plan() {
	o := imaging.Options{Width: 100, Height: 100, Fit: imaging.FitContain}.Normalize()
	p := o.Plan(400, 200)
	fmt.Println(p.Resize, p.Canvas, p.Offset)
	// Output: (100,50) (100,100) (0,25)
}
