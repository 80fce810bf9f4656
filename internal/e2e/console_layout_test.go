package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleLayout (issue 33): the Server page's tables put each column's header on
// its cells' alignment edge (numbers right, text left), its caption is not a repeat of
// the first header, a hit ratio with no requests between two scrapes is drawn as
// nothing (not as 0); the Sites page with no site says so and how to make one. Each
// page's screenshot decodes as a PNG of the page's size.
func TestConsoleLayout(t *testing.T) {
	bctx := newBrowser(t, 3*time.Minute)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.signIn(p.url, "admin", adminSecret)

	// Sites, none yet: the empty state is there and visible.
	tb.goTo("#/sites", "sites")
	tb.wait(`document.getElementById('new-site') || document.getElementById('sites-msg').textContent`)
	empty := eval[map[string]any](tb, `(()=>{const e=[...document.querySelectorAll('#main p')].find(p=>/no sites/i.test(p.textContent));`+
		`if(!e)return {};const r=e.getBoundingClientRect();return {text:e.textContent,w:r.width,h:r.height,vis:getComputedStyle(e).visibility}})()`)
	if empty["text"] == nil {
		t.Errorf("the Sites page with no site has no empty state (no paragraph saying there are no sites)")
	} else if w, h := empty["w"].(float64), empty["h"].(float64); w < 100 || h < 10 || empty["vis"] != "visible" {
		t.Errorf("the Sites empty state is not visible: %v", empty)
	} else if text := empty["text"].(string); !strings.Contains(text, "New site") {
		t.Errorf("the Sites empty state does not say how to create one: %q", text)
	}
	pageShot(t, tb, "sites-empty")

	// Server: the caches table, then the charts over a window without cache traffic.
	tb.goTo("#/server", "server")
	tb.wait(`document.querySelector('#caches tbody tr')`)
	columnsAligned(t, tb, "#caches")
	caption := eval[[]string](tb, `(()=>{const c=document.querySelector('#caches caption');`+
		`return [c?c.textContent.trim():'',document.querySelector('#caches thead th').textContent.trim()]})()`)
	if caption[0] != "" && strings.EqualFold(caption[0], caption[1]) {
		t.Errorf("the caches table's caption %q repeats its first header %q", caption[0], caption[1])
	}
	if bad := eval[[]string](tb, `[...document.querySelectorAll('svg.chart polyline, svg.chart path')].filter(e=>getComputedStyle(e).fill!=='none').map(e=>e.closest('figure').id)`); len(bad) != 0 {
		t.Errorf("charts drawn as filled shapes, not lines: %q", bad)
	}
	undefinedRatioNotDrawn(t, tb, p)
	pageShot(t, tb, "server")

	// The same rule on another table of numbers: buckets.
	tb.goTo("#/buckets", "buckets")
	tb.wait(`document.querySelector('#buckets tbody tr')`)
	columnsAligned(t, tb, "#buckets")

	// The drawing itself: a real 0 is on the zero line, an undefined value nowhere,
	// a value alone between gaps is a dot.
	got := eval[map[string]string](tb, `import('./server.js').then((s)=>s.paths([100,null,null,50,0,null]))`)
	if want := (map[string]string{"line": "M144,31 L192,58", "dots": "M0,4h0"}); got["line"] != want["line"] || got["dots"] != want["dots"] {
		t.Errorf("paths([100,null,null,50,0,null]) = %v, want %v", got, want)
	}
}

// columnsAligned checks from the boxes of their text that each column's header sits on
// the edge its body cells are aligned to (right for numbers, left for the rest), to 2 px.
func columnsAligned(t *testing.T, tb *tab, table string) {
	t.Helper()
	type col struct {
		Header string    `json:"header"`
		Align  string    `json:"align"`
		Head   []float64 `json:"head"`  // the header text's left and right
		Cells  []float64 `json:"cells"` // each cell text's edge on the cells' alignment side
	}
	cols := eval[[]col](tb, fmt.Sprintf(`(()=>{
  const box = (el) => { const r = document.createRange(); r.selectNodeContents(el); const b = r.getBoundingClientRect(); return [b.left, b.right]; };
  const heads = [...document.querySelectorAll('%[1]s thead th')];
  const rows = [...document.querySelectorAll('%[1]s tbody tr')];
  return heads.map((th, i) => {
    const cells = rows.map((tr) => tr.children[i]).filter((c) => c && c.textContent.trim());
    const align = cells.length ? getComputedStyle(cells[0]).textAlign : 'left';
    const right = align === 'right' || align === 'end';
    return { header: th.textContent.trim(), align, head: box(th), cells: cells.map((c) => box(c)[right ? 1 : 0]) };
  });
})()`, table))
	if len(cols) == 0 {
		t.Fatalf("%s: no columns", table)
	}
	numeric := 0
	for _, c := range cols {
		edge, side := c.Head[0], "left"
		if c.Align == "right" || c.Align == "end" {
			edge, side = c.Head[1], "right"
			numeric++
		}
		for i, x := range c.Cells {
			if d := x - edge; d > 2 || d < -2 {
				t.Errorf("%s column %q: its cells are %s-aligned (row %d's %s edge at %.1f px) but its header's %s edge is at %.1f px",
					table, c.Header, c.Align, i+1, side, x, side, edge)
				break
			}
		}
	}
	if numeric == 0 {
		t.Errorf("%s: no column of right-aligned numbers found (%+v): the check saw nothing", table, cols)
	}
}

// undefinedRatioNotDrawn waits for three scrapes without cache traffic (so three hit
// ratios of 0 hits out of 0) and checks each hit-ratio chart drew no point for them:
// counted from the chart's geometry (polyline points or path coordinates), whatever
// draws it, and from the values the chart exposes (data-values, "" for a gap).
func undefinedRatioNotDrawn(t *testing.T, tb *tab, p *proc) {
	t.Helper()
	tb.wait(`document.querySelector('[id^="chart-hit-"] svg')`)
	const scrapes = `performance.getEntriesByType('resource').filter(e=>/\/metrics$/.test(e.name)).length`
	// Some cache traffic first (file reads: misses, then hits), seen by a scrape, so
	// the charts have defined points before the gaps.
	id := p.uploadDeclared("default", "ratio.txt", "text/plain", "ratio")
	for range 3 {
		if st := p.status("GET", "/v1/files/"+id, nil); st != 200 {
			t.Fatalf("download: %d", st)
		}
	}
	tb.wait(fmt.Sprintf(`%s >= %d`, scrapes, eval[int](tb, scrapes)+2))
	before := cacheCounters(t, p)
	n0 := eval[int](tb, scrapes)
	tb.wait(fmt.Sprintf(`%s >= %d`, scrapes, n0+4))
	if after := cacheCounters(t, p); after != before {
		t.Fatalf("cache traffic while waiting for quiet scrapes (the check needs none):\n%s\n%s", before, after)
	}
	type drawn struct {
		ID       string       `json:"id"`
		Scrapes  int          `json:"scrapes"`
		Vertices [][2]float64 `json:"vertices"`
		Values   *string      `json:"values"`
	}
	charts := eval[[]drawn](tb, `(()=>{
  const n = `+scrapes+`;
  return [...document.querySelectorAll('[id^="chart-hit-"]')].map((fig) => {
    const svg = fig.querySelector('svg');
    const geo = [...svg.querySelectorAll('polyline,path')].map((e) => e.getAttribute('points') || e.getAttribute('d') || '').join(' ');
    const vertices = [...geo.matchAll(/(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    return { id: fig.id, scrapes: n, vertices, values: svg.dataset.values ?? null };
  });
})()`)
	if len(charts) == 0 {
		t.Fatal("no hit-ratio chart on the Server page")
	}
	points := 0
	for _, c := range charts {
		// The first scrape's ratio is since start; of the later ones, at least the last
		// three are of nothing.
		if max := c.Scrapes - 3; len(c.Vertices) > max {
			t.Errorf("%s draws %d points for %d scrapes, the last 3 of them without cache traffic (undefined ratio): want at most %d; points %v",
				c.ID, len(c.Vertices), c.Scrapes, max, c.Vertices)
		}
		points += len(c.Vertices)
		if c.Values == nil {
			t.Errorf("%s exposes no data-values", c.ID)
			continue
		}
		vals := strings.Split(*c.Values, ",")
		if len(vals) < 3 || strings.Join(vals[len(vals)-3:], ",") != ",," {
			t.Errorf("%s values %q: want the last three undefined (empty)", c.ID, *c.Values)
		}
	}
	if points == 0 {
		t.Errorf("no hit-ratio chart draws a point, though the file cache had traffic: %+v", charts)
	}
}

// cacheCounters is the cache hit and miss lines of /metrics.
func cacheCounters(t *testing.T, p *proc) string {
	t.Helper()
	resp, err := p.request(context.Background(), "GET", "/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "coffer_cache_hits_total{") || strings.HasPrefix(line, "coffer_cache_misses_total{") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no cache counters in /metrics")
	}
	return strings.Join(out, "\n")
}

// pageShot takes a full-page screenshot into a temporary directory and checks it
// decodes as a PNG at least the viewport's size with more than one colour: that the
// page rendered (not a comparison of pixels).
func pageShot(t *testing.T, tb *tab, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(t.TempDir(), name+".png")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot %s does not decode as PNG: %v", name, err)
	}
	r := img.Bounds()
	if r.Dx() < 1280 || r.Dy() < 900 || r.Dy() > 20000 || len(b) < 5000 {
		t.Errorf("screenshot %s: %dx%d, %d bytes: not the page at 1280x900", name, r.Dx(), r.Dy(), len(b))
	}
	if oneColour(img) {
		t.Errorf("screenshot %s is one colour: nothing rendered", name)
	}
	t.Logf("screenshot %s: %dx%d PNG, %d bytes", path, r.Dx(), r.Dy(), len(b))
}

// oneColour reports whether every pixel of img is the first pixel's colour.
func oneColour(img image.Image) bool {
	r := img.Bounds()
	r0, g0, b0, _ := img.At(r.Min.X, r.Min.Y).RGBA()
	for y := r.Min.Y; y < r.Max.Y; y += 4 {
		for x := r.Min.X; x < r.Max.X; x += 4 {
			if rr, g, b, _ := img.At(x, y).RGBA(); rr != r0 || g != g0 || b != b0 {
				return false
			}
		}
	}
	return true
}
