package bench

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// htmlRun is one run as the HTML template sees it.
type htmlRun struct {
	*RunResult
	Label        string
	Rows         [][2]string // figure, value
	ErrorSummary string
	Charts       []template.HTML
}

// Chart colours: p50, p90, p99 and the single series of the other charts.
const (
	colorP50  = "#1f77b4"
	colorP90  = "#ff7f0e"
	colorP99  = "#d62728"
	colorRate = "#2ca02c"
	colorMBps = "#9467bd"
	colorWork = "#7f7f7f"
)

// runCharts draws latency over time (p50, p90, p99), requests/s, MB/s and workers.
func runCharts(r *RunResult) []template.HTML {
	n := len(r.Series)
	xs := make([]float64, n)
	ys := make([][]float64, 6)
	for i := range ys {
		ys[i] = make([]float64, n)
	}
	for i, p := range r.Series {
		xs[i] = p.T
		ys[0][i], ys[1][i], ys[2][i] = p.P50Ms, p.P90Ms, p.P99Ms
		ys[3][i], ys[4][i], ys[5][i] = p.RPS, p.BPS/1e6, float64(p.Workers)
	}
	charts := []lineChart{
		{title: "Latency over time", xLabel: "seconds", yLabel: "ms", lines: []series{
			{"p50", colorP50, xs, ys[0]}, {"p90", colorP90, xs, ys[1]}, {"p99", colorP99, xs, ys[2]}}},
		{title: "Throughput: requests", xLabel: "seconds", yLabel: "req/s", lines: []series{{"req/s", colorRate, xs, ys[3]}}},
		{title: "Throughput: bytes", xLabel: "seconds", yLabel: "MB/s", lines: []series{{"MB/s", colorMBps, xs, ys[4]}}},
		{title: "Workers (busy in open loop)", xLabel: "seconds", yLabel: "workers", lines: []series{{"workers", colorWork, xs, ys[5]}}},
	}
	out := make([]template.HTML, len(charts))
	for i, c := range charts {
		out[i] = template.HTML(c.svg()) // built by lineChart, which escapes every text
	}
	return out
}

func newHTMLRun(r *RunResult) htmlRun {
	l, t := r.Latency, r.TTFB
	rss, cpu := serverCells(r)
	h := htmlRun{RunResult: r, Label: runLabel(r), Charts: runCharts(r), Rows: [][2]string{
		{"requests", fmt.Sprint(r.Requests)}, {"errors", fmt.Sprint(r.Errors)},
		{"req/s", fmt.Sprintf("%.1f", r.RPS)}, {"throughput", fmtBytes(r.BytesPerS) + "/s"},
		{"latency min / p50 / p90", fmtMs(l.MinMs) + " / " + fmtMs(l.P50Ms) + " / " + fmtMs(l.P90Ms)},
		{"latency p95 / p99 / max", fmtMs(l.P95Ms) + " / " + fmtMs(l.P99Ms) + " / " + fmtMs(l.MaxMs)},
		{"time to first byte p50 / p99", fmtMs(t.P50Ms) + " / " + fmtMs(t.P99Ms)},
		{"server peak RSS MB / CPU s", rss + " / " + cpu},
		{"client CPU s", fmt.Sprintf("%.2f", r.ClientCPUSeconds)},
	}}
	var parts []string
	for _, k := range r.ErrorKinds() {
		parts = append(parts, fmt.Sprintf("%s %d", k, r.ErrorsByKind[k]))
	}
	h.ErrorSummary = strings.Join(parts, ", ") + statusNote(r)
	return h
}

// htmlPage is the data of the report template.
type htmlPage struct {
	*Results
	Table template.HTML
	Runs  []htmlRun
}

// WriteHTML writes a self-contained report: summary table, comparison (if any) and,
// per run, inline SVG charts of latency and throughput over time. It loads nothing
// and runs no script.
func WriteHTML(w io.Writer, res *Results) error {
	var text strings.Builder
	if err := WriteText(&text, res); err != nil {
		return err
	}
	p := htmlPage{Results: res, Table: template.HTML("<pre>" + template.HTMLEscapeString(text.String()) + "</pre>")}
	for i := range res.Runs {
		p.Runs = append(p.Runs, newHTMLRun(&res.Runs[i]))
	}
	t, err := template.New("report").Parse(reportTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, p)
}

const reportTemplate = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>coffer bench report {{.Started.Format "2006-01-02 15:04:05"}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
pre { background: #f6f6f6; padding: 12px; overflow-x: auto; font-size: 12px; }
table { border-collapse: collapse; margin: 8px 0 16px; }
td, th { border: 1px solid #ddd; padding: 3px 8px; font-size: 13px; text-align: right; }
th { background: #f0f0f0; } td:first-child, th:first-child { text-align: left; }
.charts { display: grid; grid-template-columns: repeat(2, 640px); gap: 8px; }
.chart { border: 1px solid #ddd; }
.errors { color: #a00; }
</style>
</head>
<body>
<h1>coffer bench report</h1>
<p>Started {{.Started.Format "2006-01-02 15:04:05 MST"}} on {{.Host.Cores}} cores ({{.Host.OS}}/{{.Host.Arch}}, {{.Host.GoVersion}});
{{.Mode}} loop{{if .Rate}} at up to {{.Rate}} requests/s{{end}}.
{{range $i, $e := .Endpoints}}Endpoint {{if eq $i 0}}A{{else}}B{{end}}: {{$e.Target}} {{$e.URL}}{{if $e.ServerPID}} (pid {{$e.ServerPID}}){{end}}. {{end}}</p>
<h2>Summary</h2>
{{.Table}}
{{if .Comparison}}<h2>Comparison (medians over rounds, ratio B/A)</h2>
<table id="comparison"><tr><th>scenario</th><th>metric</th><th>median A</th><th>median B</th><th>B/A</th><th>better</th></tr>
{{range .Comparison}}<tr><td>{{.Scenario}}</td><td>{{.Metric}}</td><td>{{printf "%.4g" .MedianA}}</td><td>{{printf "%.4g" .MedianB}}</td><td>{{.RatioText}}</td><td>{{.Better}}</td></tr>
{{end}}</table>{{end}}
{{range .Runs}}<section class="run" id="run-{{.Scenario}}-{{.Label}}">
<h2>{{.Scenario}} <small>{{.Label}}</small></h2>
<p>{{.URL}} · stages {{range .Stages}}{{.}} {{end}}· {{printf "%.1f" .DurationS}} s</p>
<table>{{range .Rows}}<tr><td>{{index . 0}}</td><td>{{index . 1}}</td></tr>{{end}}</table>
{{if .ErrorSummary}}<p class="errors">errors: {{.ErrorSummary}}</p>{{end}}
<div class="charts">{{range .Charts}}{{.}}{{end}}</div>
</section>
{{end}}</body>
</html>
`
