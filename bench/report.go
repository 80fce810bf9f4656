package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// ReadJSON reads results written by WriteJSON.
func ReadJSON(r io.Reader) (*Results, error) {
	var res Results
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	return &res, nil
}

// WriteFile creates path and writes res into it with write (WriteJSON or WriteHTML).
func WriteFile(path string, res *Results, write func(io.Writer, *Results) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = write(f, res)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// runLabel names a run in tables: its endpoint, and its round in compare mode.
func runLabel(r *RunResult) string {
	if r.Round > 0 {
		return fmt.Sprintf("%s r%d", r.Endpoint, r.Round)
	}
	return r.Endpoint
}

// WriteText writes the summary table, the errors by kind and, in compare mode, the
// medians and ratios.
func WriteText(w io.Writer, res *Results) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	width := len("scenario")
	for i := range res.Runs {
		width = max(width, len(res.Runs[i].Scenario))
	}
	fmt.Fprintf(tw, "%-*s\trun\trequests\terrors\treq/s\tMB/s\tmin\tp50\tp90\tp95\tp99\tmax\tttfb p50\tsrv RSS MB\tsrv CPU s\t\n", width, "scenario")
	for i := range res.Runs {
		r := &res.Runs[i]
		l := r.Latency
		rss, cpu := serverCells(r)
		fmt.Fprintf(tw, "%-*s\t%s\t%d\t%d\t%.0f\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			width, r.Scenario, runLabel(r), r.Requests, r.Errors, r.RPS, r.BytesPerS/1e6, fmtMs(l.MinMs), fmtMs(l.P50Ms),
			fmtMs(l.P90Ms), fmtMs(l.P95Ms), fmtMs(l.P99Ms), fmtMs(l.MaxMs), fmtMs(r.TTFB.P50Ms), rss, cpu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeErrors(w, res)
	writeSiteTotals(w, res)
	if len(res.Comparison) > 0 {
		return writeComparison(w, res.Comparison)
	}
	return nil
}

// serverCells formats peak RSS and CPU seconds, from /proc or else /metrics.
func serverCells(r *RunResult) (rss, cpu string) {
	s := r.Server
	if s == nil {
		s = r.ServerMetrics
	}
	if s == nil {
		return "-", "-"
	}
	return fmt.Sprintf("%.1f", float64(s.PeakRSSBytes)/1e6), fmt.Sprintf("%.2f", s.CPUSeconds)
}

// writeSiteTotals writes the totals of the site runs: bytes transferred (bodies as
// sent, compressed) and timeouts.
func writeSiteTotals(w io.Writer, res *Results) {
	for i := range res.Runs {
		r := &res.Runs[i]
		if r.Kind == KindSite {
			fmt.Fprintf(w, "%s %s: %.3f GB transferred, %d timeouts, peak %d virtual users\n",
				r.Scenario, runLabel(r), float64(r.Bytes)/1e9, r.ErrorsByKind[kindTimeout.String()], peakOf(r.Stages))
		}
	}
}

// peakOf is the highest target of st.
func peakOf(st []Stage) int {
	p := 0
	for _, s := range st {
		p = max(p, s.Target)
	}
	return p
}

func writeErrors(w io.Writer, res *Results) {
	for i := range res.Runs {
		r := &res.Runs[i]
		if r.Errors == 0 {
			continue
		}
		var parts []string
		for _, k := range r.ErrorKinds() {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.ErrorsByKind[k]))
		}
		fmt.Fprintf(w, "errors %s %s: %s%s\n", r.Scenario, runLabel(r), strings.Join(parts, ", "), statusNote(r))
	}
}

// statusNote lists the non-2xx statuses of r, e.g. " (501: 120)".
func statusNote(r *RunResult) string {
	var codes []string
	for code := range r.Status {
		if code[0] != '2' {
			codes = append(codes, code)
		}
	}
	if len(codes) == 0 {
		return ""
	}
	sort.Strings(codes)
	for i, c := range codes {
		codes[i] = fmt.Sprintf("%s: %d", c, r.Status[c])
	}
	return " (status " + strings.Join(codes, ", ") + ")"
}

func writeComparison(w io.Writer, cs []ComparedStats) error {
	fmt.Fprintln(w, "\ncompare: medians over rounds; ratio is B/A")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tmetric\tmedian A\tmedian B\tB/A\tbetter\t")
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Scenario, c.Metric, axisNum(c.MedianA), axisNum(c.MedianB), c.RatioText(), c.Better)
	}
	return tw.Flush()
}
