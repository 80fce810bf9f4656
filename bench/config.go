package bench

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Endpoint is one server under test.
type Endpoint struct {
	// Target is the base URL of a coffer server (http://127.0.0.1:8000): fixtures and
	// uploads go through its API, downloads to /v1/files/{id} unless URL is set.
	Target string `json:"target,omitempty"`
	// URL is a download URL template: {file} becomes the fixture's file name and {id}
	// its file id on Target (only with Target). With URL alone, no fixture is uploaded:
	// the server must already serve them (see Config.FixturesDir).
	URL string `json:"url,omitempty"`
	// ServerPID, when above 0, is the server process to sample (/proc): peak RSS and
	// CPU seconds per scenario.
	ServerPID int `json:"server_pid,omitempty"`
	// Host, when set, is the Host header of the spa_site requests (a site is chosen
	// by its host name).
	Host string `json:"host,omitempty"`
}

// Config holds every setting of a benchmark run.
type Config struct {
	A Endpoint // the server under test
	// B, when it has a Target or URL, turns on compare mode: every scenario runs on A
	// and B alternately, Rounds times each.
	B      Endpoint
	Rounds int

	AdminSecret string // x-hasura-admin-secret; lets the run create and delete a bucket of its own
	Token       string // Authorization: Bearer JWT, used instead of the admin secret
	Bucket      string // bucket for fixtures and uploads; "" is a new one with the admin secret, else "default"

	Scenarios []string      // names, or "all"
	Ramp      time.Duration // default schedule: 1 → scenario workers over Ramp ...
	Hold      time.Duration // ... then hold for Hold
	Stages    []Stage       // replaces Ramp/Hold (and the scenario's worker target) when set
	Workers   int           // replaces each scenario's worker target when above 0
	Rate      float64       // open loop: peak arrivals per second; 0 is closed loop

	// Client picks the client of the scenarios' requests (downloads and uploads):
	// "fast" (default) is a minimal HTTP/1.1 client for http:// URLs that leaves more
	// CPU to the server; "std" is net/http (always used for https, and for setup and
	// cleanup calls to the API).
	Client string

	Timeout      time.Duration // per request, including the body
	GracefulStop time.Duration // in-flight requests may finish this long after the schedule ends
	Interval     time.Duration // time-series resolution
	FixturesDir  string        // write the download fixtures here (for a static server)
}

// DefaultConfig returns the defaults: every scenario, 10 s ramp and 60 s hold,
// closed loop, 3 rounds in compare mode. There is no default target: a load test
// must name the server it loads.
func DefaultConfig() Config {
	return Config{
		Rounds:       3,
		Scenarios:    []string{"all"},
		Ramp:         10 * time.Second,
		Hold:         60 * time.Second,
		Client:       "fast",
		Timeout:      60 * time.Second,
		GracefulStop: 10 * time.Second,
		Interval:     time.Second,
	}
}

// Compare reports whether c compares two endpoints.
func (c *Config) Compare() bool { return c.B.Target != "" || c.B.URL != "" }

// Validate checks c and says which setting is wrong.
func (c *Config) Validate() error {
	var errs []error
	if c.A.Target == "" && c.A.URL == "" && c.FixturesDir == "" {
		errs = append(errs, errors.New("no target: give --target (a coffer server) or --url (a download URL template)"))
	}
	errs = append(errs, c.A.validate("--target", "--url"))
	if c.Compare() {
		errs = append(errs, c.B.validate("--target-b", "--url-b"))
		if (c.A.Target == "") != (c.B.Target == "") {
			errs = append(errs, errors.New("compare: give both --target and --target-b, or neither"))
		}
		if c.Rounds < 1 {
			errs = append(errs, fmt.Errorf("--rounds %d must be at least 1", c.Rounds))
		}
	}
	if c.AdminSecret != "" && c.Token != "" {
		errs = append(errs, errors.New("give --admin-secret or --token, not both"))
	}
	errs = append(errs, c.validateLoad()...)
	if len(c.Scenarios) == 0 {
		errs = append(errs, errors.New("--scenario: none given"))
	} else if scs, err := SelectScenarios(c.Scenarios, c.A.Target != ""); err != nil {
		errs = append(errs, fmt.Errorf("--scenario: %w", err))
	} else {
		errs = append(errs, c.validateSite(scs))
	}
	return errors.Join(errs...)
}

func (c *Config) validateLoad() []error {
	var errs []error
	nonNeg := map[string]time.Duration{"--ramp": c.Ramp, "--hold": c.Hold}
	for _, name := range []string{"--ramp", "--hold"} {
		if d := nonNeg[name]; d < 0 {
			errs = append(errs, fmt.Errorf("%s %s must not be negative", name, d))
		}
	}
	if c.Stages != nil {
		errs = append(errs, ValidateStages(c.Stages))
	} else if c.Ramp+c.Hold <= 0 {
		errs = append(errs, errors.New("--ramp plus --hold must be above zero"))
	}
	pos := map[string]time.Duration{"--timeout": c.Timeout, "--interval": c.Interval}
	for _, name := range []string{"--timeout", "--interval"} {
		if d := pos[name]; d <= 0 {
			errs = append(errs, fmt.Errorf("%s %s must be above zero", name, d))
		}
	}
	if c.Client != "fast" && c.Client != "std" {
		errs = append(errs, fmt.Errorf("--http-client %q: want fast or std", c.Client))
	}
	if c.GracefulStop < 0 {
		errs = append(errs, fmt.Errorf("--graceful-stop %s must not be negative", c.GracefulStop))
	}
	if c.Rate < 0 {
		errs = append(errs, fmt.Errorf("--rate %g must not be negative", c.Rate))
	}
	if c.Workers < 0 || c.Workers > maxStageTarget {
		errs = append(errs, fmt.Errorf("--workers %d must be between 0 and %d", c.Workers, maxStageTarget))
	}
	return errs
}

// validate checks the URLs of e; flag names go into the messages.
func (e Endpoint) validate(targetFlag, urlFlag string) error {
	var errs []error
	if e.Target != "" {
		errs = append(errs, checkURL(targetFlag, e.Target))
	}
	if e.URL != "" {
		errs = append(errs, checkURL(urlFlag, strings.NewReplacer("{file}", "f", "{id}", "i").Replace(e.URL)))
		if strings.Contains(e.URL, "{id}") && e.Target == "" {
			errs = append(errs, fmt.Errorf("%s: {id} needs %s (file ids come from uploading the fixtures)", urlFlag, targetFlag))
		}
	}
	if e.ServerPID < 0 {
		errs = append(errs, fmt.Errorf("server pid %d must not be negative", e.ServerPID))
	}
	return errors.Join(errs...)
}

func checkURL(flag, s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("%s %q: %v", flag, s, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%s %q: want an http:// or https:// URL with a host", flag, s)
	}
	return nil
}

// schedule returns the load schedule of scenario s under c.
func (c *Config) schedule(s Scenario) Schedule {
	if c.Stages != nil {
		return NewSchedule(c.Stages)
	}
	if s.Stages != nil {
		return NewSchedule(s.Stages)
	}
	target := s.Workers
	if c.Workers > 0 {
		target = c.Workers
	}
	return NewSchedule(RampHold(target, c.Ramp, c.Hold))
}
