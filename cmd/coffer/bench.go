package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/pprof"
	"time"

	"github.com/coffer/coffer/bench"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// benchFlags are the command-line settings of coffer bench beyond bench.Config.
type benchFlags struct {
	cfg      bench.Config
	stages   string
	compare  bool
	jsonPath string
	htmlPath string
	quiet    bool
	cpuProf  string
}

func newBenchCmd() *cobra.Command {
	f := &benchFlags{cfg: bench.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test a coffer server (or any server of the same files) and report latency and throughput",
		Long: `Runs built-in scenarios (downloads of 100 KB, 5 MB and 45 MB files, a 5.3 MB JPEG
plain and transformed, uploads) against --target, ramping workers from 1 to each
scenario's target over --ramp and holding for --hold (or following --stages), and
prints a table; --json and --html write full results with charts. Fixtures are
uploaded first (into a bucket of its own with --admin-secret) and deleted after,
also on Ctrl-C. --url runs the download scenarios against any URL template;
--target-b/--url-b compare two servers in alternating rounds.

spa_site (run only when named) walks a static site like a browser: each virtual
user GETs index.html and the SPA bundle in order (Accept-Encoding: br, gzip; bytes
counted as sent, not decoded), then the 10 largest assets, then pauses 1 s; by
default along the reference stages ` + bench.SPASiteStages + `.
The files come from the manifest ` + bench.SPAManifestName + `: --fixtures-dir writes the
fixture there (and reads it), else it is fetched from the site.`,
		Example: `  coffer bench --target http://127.0.0.1:8000 --admin-secret s --scenario all --json b.json --html b.html
  coffer bench --target http://127.0.0.1:8000 --admin-secret s --scenario download_small_file --stages 10@1m,0@1m,40@3m
  coffer bench --fixtures-dir /var/www/bench --url 'http://127.0.0.1:8080/bench/{file}' --scenario download_small_file
  coffer bench --target http://127.0.0.1:8000 --target-b http://127.0.0.1:8001 --admin-secret s --rounds 3
  coffer bench --scenario spa_site --fixtures-dir /srv/www/spa   # write the SPA fixture and exit
  coffer bench --scenario spa_site --url http://127.0.0.1:8080/ --host www.example.test --stages 10@10s,3000@30s,0@10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	f.register(cmd.Flags())
	cmd.AddCommand(newBenchHelloCmd(), newBenchReportCmd())
	return cmd
}

func (f *benchFlags) register(fs *pflag.FlagSet) {
	c := &f.cfg
	fs.StringVar(&c.A.Target, "target", "", "base URL of the coffer server under test, e.g. http://127.0.0.1:8000")
	fs.StringVar(&c.A.URL, "url", "", "download URL template ({file}: fixture name, {id}: file id on --target); without --target nothing is uploaded")
	fs.IntVar(&c.A.ServerPID, "server-pid", 0, "sample this server process's RSS and CPU time, with its child processes', from /proc")
	fs.StringVar(&c.A.Host, "host", "", "spa_site: Host header of the requests (the site's host name)")
	fs.StringVar(&c.B.Host, "host-b", "", "compare: Host header of the second server's spa_site requests")
	fs.StringVar(&c.B.Target, "target-b", "", "compare: second coffer server")
	fs.StringVar(&c.B.URL, "url-b", "", "compare: second download URL template")
	fs.IntVar(&c.B.ServerPID, "server-pid-b", 0, "compare: process of the second server")
	fs.BoolVar(&f.compare, "compare", false, "compare --target/--url with --target-b/--url-b (implied by either)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "compare: rounds of A B per scenario")
	fs.StringVar(&c.AdminSecret, "admin-secret", "", "x-hasura-admin-secret (creates and deletes a bucket of its own)")
	fs.StringVar(&c.Token, "token", "", "JWT for Authorization: Bearer (uses --bucket, default \"default\")")
	fs.StringVar(&c.Bucket, "bucket", "", "bucket for fixtures and uploads (default: a new one with --admin-secret, else \"default\")")
	fs.StringSliceVar(&c.Scenarios, "scenario", c.Scenarios, "scenarios, comma-separated, or all: "+scenarioNames())
	fs.DurationVar(&c.Ramp, "ramp", c.Ramp, "ramp from 1 worker to the scenario's target over this time")
	fs.DurationVar(&c.Hold, "hold", c.Hold, "then hold the target this long")
	fs.StringVar(&f.stages, "stages", "", "schedule TARGET@DURATION,... replacing --ramp/--hold and the scenario's workers, e.g. 10@1m,0@1m,40@3m")
	fs.IntVar(&c.Workers, "workers", 0, "worker target of every scenario (default: the scenario's own)")
	fs.Float64Var(&c.Rate, "rate", 0, "open loop: peak requests/s following the schedule's shape (default: closed loop)")
	fs.StringVar(&c.Client, "http-client", c.Client, "client of the downloads and uploads: fast (minimal HTTP/1.1, http:// only) or std (net/http)")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "per-request timeout, body included")
	fs.DurationVar(&c.GracefulStop, "graceful-stop", c.GracefulStop, "let in-flight requests finish this long after the schedule ends")
	fs.DurationVar(&c.Interval, "interval", c.Interval, "time-series resolution")
	fs.StringVar(&c.FixturesDir, "fixtures-dir", "", "write the download fixtures into this directory (for a static server; alone: write and exit)")
	fs.StringVar(&f.jsonPath, "json", "", "write full results as JSON to this file")
	fs.StringVar(&f.htmlPath, "html", "", "write a self-contained HTML report with charts to this file")
	fs.BoolVar(&f.quiet, "quiet", false, "no live progress line (it is off anyway when stdout is not a terminal)")
	fs.StringVar(&f.cpuProf, "cpuprofile", "", "write a CPU profile of the load generator to this file")
	_ = fs.MarkHidden("cpuprofile")
}

func scenarioNames() string {
	var s string
	for i, sc := range bench.Scenarios() {
		if i > 0 {
			s += ", "
		}
		s += sc.Name
	}
	return s
}

// config completes the Config from the flags that need parsing.
func (f *benchFlags) config(fs *pflag.FlagSet) (bench.Config, error) {
	c := f.cfg
	if f.stages != "" {
		st, err := bench.ParseStages(f.stages)
		if err != nil {
			return c, err
		}
		c.Stages = st
		if fs.Changed("ramp") || fs.Changed("hold") {
			return c, errors.New("--stages replaces --ramp and --hold: give one or the other")
		}
	}
	if f.compare && !c.Compare() {
		return c, errors.New("--compare needs --target-b or --url-b")
	}
	return c, c.Validate()
}

func (f *benchFlags) run(cmd *cobra.Command) error {
	cfg, err := f.config(cmd.Flags())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	var live io.Writer
	if !f.quiet && isTerminal(out) {
		live = out
	}
	r, err := bench.NewRunner(cfg, cmd.ErrOrStderr(), live)
	if err != nil {
		return err
	}
	if f.cpuProf != "" {
		stop, err := startCPUProfile(f.cpuProf)
		if err != nil {
			return err
		}
		defer stop()
	}
	res, runErr := r.Run(cmd.Context())
	if errors.Is(runErr, context.Canceled) {
		runErr = errors.New("interrupted (fixtures deleted; partial results above)")
	}
	if res == nil || len(res.Runs) == 0 {
		return runErr
	}
	if err := bench.WriteText(out, res); err != nil {
		return err
	}
	if err := f.writeReports(res); err != nil {
		return err
	}
	return runErr
}

func (f *benchFlags) writeReports(res *bench.Results) error {
	if f.jsonPath != "" {
		if err := bench.WriteFile(f.jsonPath, res, bench.WriteJSON); err != nil {
			return err
		}
	}
	if f.htmlPath != "" {
		return bench.WriteFile(f.htmlPath, res, bench.WriteHTML)
	}
	return nil
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newBenchHelloCmd is a hidden helper: a trivial HTTP server for measuring the
// generator's own overhead, e.g. against wrk.
func newBenchHelloCmd() *cobra.Command {
	var listen string
	var dur time.Duration
	cmd := &cobra.Command{
		Use:    "hello-server",
		Short:  "Serve a 6-byte response on every path (for measuring the load generator itself)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "listening on", ln.Addr())
			ctx := cmd.Context()
			if dur > 0 {
				var cancel func()
				ctx, cancel = context.WithTimeout(ctx, dur)
				defer cancel()
			}
			return bench.ServeHello(ctx, ln)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:18081", "address to listen on")
	cmd.Flags().DurationVar(&dur, "for", 0, "stop after this long (0: until Ctrl-C)")
	return cmd
}

// startCPUProfile profiles this process into path until the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	pf, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(pf); err != nil {
		pf.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); pf.Close() }, nil
}

// newBenchReportCmd renders saved JSON results again, as a table and optionally HTML.
func newBenchReportCmd() *cobra.Command {
	var htmlPath string
	cmd := &cobra.Command{
		Use:   "report RESULTS.json",
		Short: "Print the table of saved results (from --json) and optionally write their HTML report",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			res, err := bench.ReadJSON(f)
			if err != nil {
				return err
			}
			if htmlPath != "" {
				if err := bench.WriteFile(htmlPath, res, bench.WriteHTML); err != nil {
					return err
				}
			}
			return bench.WriteText(cmd.OutOrStdout(), res)
		},
	}
	cmd.Flags().StringVar(&htmlPath, "html", "", "write the HTML report to this file")
	return cmd
}
