package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Runner runs a validated Config.
type Runner struct {
	cfg      Config
	log      io.Writer // setup and cleanup messages
	progress io.Writer // live progress line; nil for none
}

// NewRunner validates cfg; log receives setup and cleanup messages and progress (if
// not nil) a live progress line.
func NewRunner(cfg Config, log, progress io.Writer) (*Runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = io.Discard
	}
	return &Runner{cfg: cfg, log: log, progress: progress}, nil
}

// Run writes the fixtures (with FixturesDir), sets up each endpoint, runs every
// scenario (alternating endpoints and rounds in compare mode) and cleans up, also
// when ctx is cancelled; it then returns what was measured so far with ctx's error.
func (r *Runner) Run(ctx context.Context) (*Results, error) {
	c := &r.cfg
	scs, err := SelectScenarios(c.Scenarios, c.A.Target != "")
	if err != nil {
		return nil, err
	}
	res := &Results{Started: time.Now(), Host: thisHost(), Mode: "closed", Rate: c.Rate, Endpoints: []Endpoint{c.A}}
	if c.Rate > 0 {
		res.Mode = "open"
	}
	if c.FixturesDir != "" {
		if err := writeFixtures(c.FixturesDir, scs, r.log); err != nil {
			return nil, err
		}
		if hasKind(scs, KindSite) {
			if err := WriteSPAFixture(c.FixturesDir, DefaultSPA(spaSeed), r.log); err != nil {
				return nil, err
			}
		}
	}
	if c.A.Target == "" && c.A.URL == "" {
		return res, nil
	}
	eps := []*endpointRun{r.newEndpoint("A", c.A, scs)}
	if c.Compare() {
		eps = append(eps, r.newEndpoint("B", c.B, scs))
		res.Endpoints = append(res.Endpoints, c.B)
	}
	defer r.cleanup(ctx, eps)
	for _, ep := range eps {
		if err := ep.setup(ctx, scs, r.log); err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", ep.label, err)
		}
	}
	err = r.runAll(ctx, scs, eps, res)
	if c.Compare() {
		res.Comparison = Compared(res.Runs)
	}
	return res, err
}

// runAll runs each scenario, Rounds times on every endpoint in turn (A B A B ...).
func (r *Runner) runAll(ctx context.Context, scs []Scenario, eps []*endpointRun, res *Results) error {
	rounds := 1
	if r.cfg.Compare() {
		rounds = r.cfg.Rounds
	}
	for _, sc := range scs {
		for round := 1; round <= rounds; round++ {
			for _, ep := range eps {
				if err := ctx.Err(); err != nil {
					return err
				}
				rr, err := r.runOne(ctx, ep, sc, round)
				if err != nil {
					return err
				}
				if !r.cfg.Compare() {
					rr.Round = 0
				}
				res.Runs = append(res.Runs, rr)
			}
		}
	}
	return ctx.Err()
}

// runOne runs scenario sc once against ep.
func (r *Runner) runOne(ctx context.Context, ep *endpointRun, sc Scenario, round int) (RunResult, error) {
	sched := r.cfg.schedule(sc)
	newOp, url, err := ep.opFactory(sc)
	if err != nil {
		return RunResult{}, err
	}
	pr := newProgress(r.progress, fmt.Sprintf("%s %s r%d", ep.label, sc.Name, round), sched.Duration())
	spec := loadSpec{sched: sched, rate: r.cfg.Rate, workers: sched.Peak(), interval: r.cfg.Interval,
		graceful: r.cfg.GracefulStop, newOp: newOp, onTick: pr.update, pooledBuf: sc.Kind == KindSite}
	smp := startSampler(ctx, ep.ServerPID, ep.api, 250*time.Millisecond)
	cpu0 := processCPU()
	g := runLoad(ctx, spec)
	rr := newRunResult(sc, ep.label, round, url, g)
	rr.ClientCPUSeconds = processCPU() - cpu0
	rr.Server, rr.ServerMetrics = smp.stop(context.WithoutCancel(ctx))
	pr.finish()
	if sc.Kind == KindUpload {
		ep.deleteUploads(ctx)
	}
	return rr, nil
}

// processCPU is this process's user+system CPU time in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// cleanup deletes what the endpoints created, with a context that survives ctx's
// cancellation (Ctrl-C) but not forever.
func (r *Runner) cleanup(ctx context.Context, eps []*endpointRun) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for _, ep := range eps {
		ep.cleanup(cctx, r.log)
	}
}

// endpointRun is the per-endpoint state of a run: its client and what it created.
type endpointRun struct {
	Endpoint
	label     string
	cfg       *Config
	transport *http.Transport
	client    *http.Client
	api       *apiClient // nil without Target
	bucket    string
	ownBucket bool
	site      *SPAManifest      // site scenarios: the files to walk
	ids       map[string]string // fixture name → file id
	created   idList            // uploads of the scenario running, deleted after it
	leftover  idList            // uploads that could not be deleted after their run
}

// deleteUploadWorkers is how many DELETEs deleteUploads keeps in flight.
const deleteUploadWorkers = 8

// deleteUploads deletes the files the last upload run created, after the run (so not
// timed, and not sharing the server with the measured uploads), even while ctx is
// being cancelled; ids it could not delete go to leftover for the cleanup to retry.
func (ep *endpointRun) deleteUploads(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	ids := make(chan string)
	var wg sync.WaitGroup
	for range deleteUploadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range ids {
				if ep.api.deleteFile(ctx, id) != nil {
					ep.leftover.add(id)
				}
			}
		}()
	}
	for _, id := range ep.created.take() {
		ids <- id
	}
	close(ids)
	wg.Wait()
}

func (r *Runner) newEndpoint(label string, e Endpoint, scs []Scenario) *endpointRun {
	peak := 0
	for _, sc := range scs {
		peak = max(peak, r.cfg.schedule(sc).Peak())
	}
	tr := newTransport(peak)
	ep := &endpointRun{Endpoint: e, label: label, cfg: &r.cfg, transport: tr,
		client: newClient(tr, r.cfg.Timeout), ids: map[string]string{}}
	if e.Target != "" {
		ep.api = newAPIClient(e.Target, ep.client, credentials{adminSecret: r.cfg.AdminSecret, token: r.cfg.Token})
	}
	return ep
}

// setup loads the site manifest of a site scenario, picks or creates the bucket and
// uploads the download fixtures.
func (ep *endpointRun) setup(ctx context.Context, scs []Scenario, log io.Writer) error {
	if hasKind(scs, KindSite) {
		if err := ep.loadManifest(ctx); err != nil {
			return err
		}
	}
	onlySite := len(scs) > 0 && !hasKind(scs, KindDownload) && !hasKind(scs, KindUpload)
	if ep.api == nil || onlySite {
		return nil
	}
	ep.bucket = ep.cfg.Bucket
	switch {
	case ep.bucket != "":
	case ep.cfg.AdminSecret != "":
		ep.bucket, ep.ownBucket = "bench-"+randomHex(4), true
		if err := ep.api.createBucket(ctx, ep.bucket); err != nil {
			return err
		}
		fmt.Fprintf(log, "%s: created bucket %s\n", ep.label, ep.bucket)
	default:
		ep.bucket = "default"
	}
	for _, sc := range scs {
		f := sc.Fixture
		if _, done := ep.ids[f.Name]; done || sc.Kind != KindDownload {
			continue
		}
		id, err := ep.api.uploadFixture(ctx, ep.bucket, f)
		if err != nil {
			return err
		}
		ep.ids[f.Name] = id
		fmt.Fprintf(log, "%s: uploaded fixture %s as %s\n", ep.label, f.Name, id)
	}
	return nil
}

// cleanup deletes the fixtures, leftover uploads and the bucket the run created.
func (ep *endpointRun) cleanup(ctx context.Context, log io.Writer) {
	defer ep.transport.CloseIdleConnections()
	if ep.api == nil {
		return
	}
	ids := ep.leftover.take()
	for _, id := range ep.ids {
		ids = append(ids, id)
	}
	for _, id := range ids {
		if err := ep.api.deleteFile(ctx, id); err != nil {
			fmt.Fprintf(log, "%s: cleanup: %v\n", ep.label, err)
		}
	}
	if ep.ownBucket {
		if err := ep.api.deleteBucket(ctx, ep.bucket); err != nil {
			fmt.Fprintf(log, "%s: cleanup: %v\n", ep.label, err)
			return
		}
		fmt.Fprintf(log, "%s: deleted bucket %s and %d files\n", ep.label, ep.bucket, len(ids))
	}
}

// opFactory returns the per-worker request maker of sc on ep and the URL it hits.
func (ep *endpointRun) opFactory(sc Scenario) (func(ctx context.Context, id int) op, string, error) {
	switch sc.Kind {
	case KindUpload:
		return ep.uploadFactory(sc)
	case KindSite:
		return ep.siteFactory()
	}
	url := ep.downloadURL(sc)
	cred := credentials{adminSecret: ep.cfg.AdminSecret, token: ep.cfg.Token}
	if ep.cfg.Client == "fast" && strings.HasPrefix(url, "http://") {
		if _, err := newRawGet(context.Background(), url, cred, ep.cfg.Timeout); err != nil {
			return nil, "", fmt.Errorf("%s: %w", sc.Name, err)
		}
		return func(ctx context.Context, _ int) op {
			g, _ := newRawGet(ctx, url, cred, ep.cfg.Timeout) // checked above
			return g
		}, url, nil
	}
	base, err := newDownload(context.Background(), ep.client, url, cred)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", sc.Name, err)
	}
	return func(ctx context.Context, _ int) op {
		return &download{client: base.client, req: base.req.Clone(ctx)}
	}, url, nil
}

// uploadFactory is opFactory for an upload scenario: the fast client for plain http
// and a fixture of known size, else net/http. The form is built once for the run.
func (ep *endpointRun) uploadFactory(sc Scenario) (func(ctx context.Context, id int) op, string, error) {
	form := newUploadForm(ep.bucket, sc.Fixture)
	url := ep.api.base + "/v1/files"
	if ep.cfg.Client == "fast" && strings.HasPrefix(url, "http://") && sc.Fixture.Size >= 0 {
		if _, err := newRawUpload(context.Background(), ep.api.base, ep.api.cred, ep.cfg.Timeout, form, &ep.created); err != nil {
			return nil, "", fmt.Errorf("%s: %w", sc.Name, err)
		}
		return func(ctx context.Context, _ int) op {
			u, _ := newRawUpload(ctx, ep.api.base, ep.api.cred, ep.cfg.Timeout, form, &ep.created) // checked above
			return u
		}, url, nil
	}
	u := &upload{api: ep.api, form: form, created: &ep.created}
	return func(context.Context, int) op { return u }, url, nil
}

// downloadURL is the URL of sc's fixture on ep, with the scenario's query.
func (ep *endpointRun) downloadURL(sc Scenario) string {
	u := strings.TrimRight(ep.Target, "/") + "/v1/files/" + ep.ids[sc.Fixture.Name]
	if ep.URL != "" {
		u = strings.NewReplacer("{file}", sc.Fixture.Name, "{id}", ep.ids[sc.Fixture.Name]).Replace(ep.URL)
	}
	if sc.Query == "" {
		return u
	}
	if strings.Contains(u, "?") {
		return u + "&" + sc.Query
	}
	return u + "?" + sc.Query
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
