package bench

import (
	"fmt"
	"sort"
	"strings"
)

// Kind says what a scenario's requests do.
type Kind string

// Scenario kinds.
const (
	KindDownload Kind = "download" // GET the fixture, discard the body
	KindUpload   Kind = "upload"   // POST a multipart upload; the new files are deleted after the run
	// KindSite (spasite.go): virtual users walk a static site's files in sequence
)

// Scenario is one built-in workload.
type Scenario struct {
	Name    string  `json:"name"`
	Kind    Kind    `json:"kind"`
	Fixture Fixture `json:"-"`
	Query   string  `json:"query,omitempty"` // added to download URLs, e.g. "w=800&b=2"
	Workers int     `json:"workers"`         // target level of the default ramp
	Stages  []Stage `json:"-"`               // default schedule instead of the ramp; nil for the ramp
}

// Sizes of the generated fixtures (decimal units, as the scenario names say).
const (
	smallSize  = 100 * 1000
	mediumSize = 5 * 1000 * 1000
	largeSize  = 45 * 1000 * 1000
)

// Scenarios returns the built-in scenarios in their default order.
func Scenarios() []Scenario {
	small := Fixture{Name: "bench-small-100KB.bin", Size: smallSize, ContentType: "application/octet-stream"}
	medium := Fixture{Name: "bench-medium-5MB.bin", Size: mediumSize, ContentType: "application/octet-stream"}
	large := Fixture{Name: "bench-large-45MB.bin", Size: largeSize, ContentType: "application/octet-stream"}
	img := Fixture{Name: "bench-image-4000x3000.jpg", Size: -1, ContentType: "image/jpeg", jpeg: true}
	return []Scenario{
		{Name: "download_small_file", Kind: KindDownload, Fixture: small, Workers: 100},
		{Name: "download_medium_file", Kind: KindDownload, Fixture: medium, Workers: 100},
		{Name: "download_large_file", Kind: KindDownload, Fixture: large, Workers: 50},
		{Name: "download_image", Kind: KindDownload, Fixture: img, Workers: 100},
		{Name: "download_image_manipulated", Kind: KindDownload, Fixture: img, Query: "w=800&b=2", Workers: 10},
		{Name: "upload_small_file", Kind: KindUpload, Fixture: small, Workers: 50},
		{Name: "upload_large_file", Kind: KindUpload, Fixture: large, Workers: 10},
		spaScenario(),
	}
}

// SelectScenarios resolves a list of names ("all" means every scenario allowed but
// spa_site, which runs only when named) to scenarios in the built-in order. Without the API (uploads=false), "all" means every
// download scenario and naming an upload scenario is an error.
func SelectScenarios(names []string, uploads bool) ([]Scenario, error) {
	byName := map[string]Scenario{}
	var known []string
	for _, s := range Scenarios() {
		byName[s.Name] = s
		known = append(known, s.Name)
	}
	want := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		switch s, ok := byName[n]; {
		case n == "all":
			for _, s := range Scenarios() {
				want[s.Name] = want[s.Name] || s.Kind != KindSite && (uploads || s.Kind == KindDownload)
			}
		case !ok:
			sort.Strings(known)
			return nil, fmt.Errorf("unknown scenario %q (known: all, %s)", n, strings.Join(known, ", "))
		case s.Kind == KindUpload && !uploads:
			return nil, fmt.Errorf("scenario %s uploads through the API: it needs --target", n)
		default:
			want[n] = true
		}
	}
	var out []Scenario
	for _, s := range Scenarios() {
		if want[s.Name] {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenario selected")
	}
	return out, nil
}
