package bench

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// series is one line of a chart.
type series struct {
	name  string
	color string
	xs    []float64
	ys    []float64
}

// lineChart is a small inline SVG line chart with axes, grid and legend; it needs no
// script and no external resource.
type lineChart struct {
	title  string
	xLabel string
	yLabel string
	lines  []series
}

// Chart geometry in SVG user units.
const (
	chartW, chartH         = 640, 260
	padL, padR, padT, padB = 64, 16, 30, 44
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	maxTicks               = 6
	legendStep             = 64
)

// svg renders the chart.
func (c lineChart) svg() string {
	xmax, xstep, ymax, ystep := c.extent()
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, html.EscapeString(c.title))
	fmt.Fprintf(&b, `<title>%s</title><rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, html.EscapeString(c.title), chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="18" font-size="14" font-weight="bold">%s</text>`, padL, html.EscapeString(c.title))
	c.axes(&b, xmax, xstep, ymax, ystep)
	for i, s := range c.lines {
		c.line(&b, s, xmax, ymax)
		lx := chartW - padR - (len(c.lines)-i)*legendStep
		fmt.Fprintf(&b, `<rect x="%d" y="9" width="12" height="4" fill="%s"/><text x="%d" y="15" font-size="11">%s</text>`,
			lx, s.color, lx+16, html.EscapeString(s.name))
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// extent returns axis maxima covering every point and round tick steps.
func (c lineChart) extent() (xmax, xstep, ymax, ystep float64) {
	for _, s := range c.lines {
		for i := range s.xs {
			xmax, ymax = math.Max(xmax, s.xs[i]), math.Max(ymax, s.ys[i])
		}
	}
	xmax, xstep = niceAxis(math.Max(xmax, 1))
	ymax, ystep = niceAxis(math.Max(ymax, 1e-3))
	return xmax, xstep, ymax, ystep
}

// niceAxis returns a round tick step (1, 2, 2.5 or 5 times a power of ten) giving at
// most maxTicks intervals, and the multiple of it that covers v.
func niceAxis(v float64) (top, step float64) {
	step = niceCeil(v / maxTicks)
	return step * math.Ceil(v/step-1e-9), step
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func (c lineChart) axes(b *strings.Builder, xmax, xstep, ymax, ystep float64) {
	for v := 0.0; v <= ymax*(1+1e-9); v += ystep {
		y := padT + plotH - plotH*v/ymax
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#e3e3e3"/>`, padL, y, padL+plotW, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end">%s</text>`, padL-6, y+4, axisNum(v))
	}
	for v := 0.0; v <= xmax*(1+1e-9); v += xstep {
		x := padL + plotW*v/xmax
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e3e3e3"/>`, x, padT, x, padT+plotH)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, x, padT+plotH+16, axisNum(v))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`, padL, padT, plotW, plotH)
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`,
		padL+plotW/2, chartH-8, html.EscapeString(c.xLabel))
	fmt.Fprintf(b, `<text x="14" y="%d" font-size="11" text-anchor="middle" transform="rotate(-90 14 %d)">%s</text>`,
		padT+plotH/2, padT+plotH/2, html.EscapeString(c.yLabel))
}

func (c lineChart) line(b *strings.Builder, s series, xmax, ymax float64) {
	if len(s.xs) == 0 {
		return
	}
	fmt.Fprintf(b, `<polyline class="series" data-name="%s" fill="none" stroke="%s" stroke-width="1.6" points="`,
		html.EscapeString(s.name), s.color)
	for i := range s.xs {
		x := padL + plotW*s.xs[i]/xmax
		y := padT + plotH - plotH*s.ys[i]/ymax
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(b, "%.1f,%.1f", x, y)
	}
	b.WriteString(`"/>`)
}

// axisNum formats a tick value compactly (1.5k, 2M, 0.25).
func axisNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return trimZeros(fmt.Sprintf("%.2f", v/1e9)) + "G"
	case a >= 1e6:
		return trimZeros(fmt.Sprintf("%.2f", v/1e6)) + "M"
	case a >= 1e4:
		return trimZeros(fmt.Sprintf("%.2f", v/1e3)) + "k"
	case a >= 100 || a == 0:
		return fmt.Sprintf("%.0f", v)
	}
	return trimZeros(fmt.Sprintf("%.3f", v))
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
