package bench

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// sampleResults is a two-endpoint, two-round result with errors, series and
// server figures.
func sampleResults() *Results {
	res := &Results{Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Host: thisHost(), Mode: "closed",
		Endpoints: []Endpoint{{Target: "http://127.0.0.1:1"}, {URL: "http://127.0.0.1:2/<b>{file}"}}}
	for round := 1; round <= 2; round++ {
		for i, ep := range []string{"A", "B"} {
			rps := 1000.0 * float64(i+1) * float64(round)
			r := RunResult{Scenario: "download_small_file", Kind: KindDownload, Endpoint: ep, Round: round,
				URL: "http://127.0.0.1/x?a=1&b=<2>", Stages: []Stage{{1, 0}, {10, time.Second}},
				DurationS: 2, Requests: int64(rps * 2), Errors: 3, Bytes: int64(rps * 2e5), RPS: rps, BytesPerS: rps * 1e5,
				ErrorsByKind: map[string]int64{"status_5xx": 2, "connection": 1}, Status: map[string]int64{"200": 5, "503": 2},
				Latency: Latency{Count: 5, MinMs: 0.1, P50Ms: 2 * float64(i+1), P99Ms: 9, MaxMs: 12},
				Server:  &ServerStats{Source: "proc", PID: 42, PeakRSSBytes: 50e6, HWMBytes: 60e6, CPUSeconds: 1.5},
				Series: []Point{{T: 1, Workers: 5, Requests: 10, RPS: 10, P50Ms: 1, P99Ms: 4},
					{T: 2, Workers: 10, Requests: 30, RPS: 30, BPS: 3e6, P50Ms: 2, P99Ms: 8}}}
			res.Runs = append(res.Runs, r)
		}
	}
	res.Comparison = Compared(res.Runs)
	return res
}

func TestJSONRoundTrip(t *testing.T) {
	in := sampleResults()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadJSON(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip differs:\n in %+v\nout %+v", in, out)
	}
	if _, err := ReadJSON(strings.NewReader(`{"runs": 3}`)); err == nil {
		t.Error("malformed JSON accepted")
	}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleResults()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"download_small_file", "A r1", "B r2", "errors download_small_file A r1: connection 1, status_5xx 2 (status 503: 2)",
		"compare: medians", "req/s", "2.00", "server CPU ms/req"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

// walk calls f for every element node of n's tree.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func TestWriteHTMLIsSelfContainedWithCharts(t *testing.T) {
	res := sampleResults()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, res); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "<b>") || strings.Contains(page, "<2>") {
		t.Error("unescaped text from the results in the page")
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	var polylines []string
	walk(doc, func(n *html.Node) {
		count[n.Data]++
		switch n.Data {
		case "polyline":
			polylines = append(polylines, attr(n, "points"))
		case "script", "link", "img", "iframe":
			t.Errorf("page has a <%s>: not self-contained", n.Data)
		}
		if src := attr(n, "src") + attr(n, "href"); src != "" {
			t.Errorf("<%s> loads %q", n.Data, src)
		}
	})
	runs := len(res.Runs)
	if count["svg"] != 4*runs || count["section"] != runs || count["title"] != 1+4*runs {
		t.Errorf("svg %d sections %d titles %d, want %d, %d, %d", count["svg"], count["section"], count["title"], 4*runs, runs, 1+4*runs)
	}
	if len(polylines) != 6*runs { // latency p50/p90/p99, req/s, MB/s, workers
		t.Errorf("%d polylines, want %d", len(polylines), 6*runs)
	}
	for _, p := range polylines {
		if len(strings.Fields(p)) != 2 {
			t.Errorf("polyline points %q, want one point per interval", p)
		}
	}
	if !strings.Contains(page, `id="comparison"`) || !strings.Contains(page, "Latency over time") {
		t.Error("page lacks the comparison table or the latency chart")
	}
}

func TestNiceCeilAndAxisNum(t *testing.T) {
	ceil := []struct{ in, want float64 }{{1, 1}, {1.2, 2}, {2.2, 2.5}, {3, 5}, {7, 10}, {0.03, 0.05}, {4200, 5000}, {250, 250}}
	for _, tc := range ceil {
		if got := niceCeil(tc.in); got < tc.want*0.999 || got > tc.want*1.001 {
			t.Errorf("niceCeil(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
	axes := []struct{ in, top, step float64 }{{20, 20, 5}, {12.1, 12.5, 2.5}, {1, 1, 0.2}, {97, 100, 20}, {0.9, 1, 0.2}, {8101, 10000, 2000}}
	for _, tc := range axes {
		top, step := niceAxis(tc.in)
		if math.Abs(top-tc.top) > 1e-9*tc.top || math.Abs(step-tc.step) > 1e-9*tc.step || top/step > maxTicks+1e-9 {
			t.Errorf("niceAxis(%g) = %g, %g; want %g, %g", tc.in, top, step, tc.top, tc.step)
		}
	}
	nums := []struct {
		in   float64
		want string
	}{{0, "0"}, {0.25, "0.25"}, {12.5, "12.5"}, {250, "250"}, {25000, "25k"}, {2.5e6, "2.5M"}, {3e9, "3G"}}
	for _, tc := range nums {
		if got := axisNum(tc.in); got != tc.want {
			t.Errorf("axisNum(%g) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompared(t *testing.T) {
	res := sampleResults()
	byMetric := map[string]ComparedStats{}
	for _, c := range res.Comparison {
		byMetric[c.Metric] = c
	}
	tests := []struct {
		metric       string
		medA, medB   float64
		ratio        float64
		roundsPerEnd int
	}{
		{"req/s", 1500, 3000, 2, 2},
		{"p50 ms", 2, 4, 2, 2},
		{"server peak RSS MB", 50, 50, 1, 2},
	}
	for _, tc := range tests {
		c, ok := byMetric[tc.metric]
		if !ok {
			t.Errorf("no %s in the comparison", tc.metric)
			continue
		}
		if c.MedianA != tc.medA || c.MedianB != tc.medB || c.Ratio != tc.ratio || len(c.A) != tc.roundsPerEnd {
			t.Errorf("%s: %+v, want medians %g/%g ratio %g", tc.metric, c, tc.medA, tc.medB, tc.ratio)
		}
	}
	if m := median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("median = %g", m)
	}
	res.Runs[3].Server = nil // a metric missing from one run is left out
	for _, c := range Compared(res.Runs) {
		if c.Metric == "server peak RSS MB" {
			t.Error("server figure compared although B lacks it in one round")
		}
	}
}
