package bench

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr string // "" for valid
	}{
		{"target", func(c *Config) { c.A.Target = "http://127.0.0.1:8000" }, ""},
		{"url only", func(c *Config) { c.A.URL = "http://127.0.0.1:8080/{file}" }, ""},
		{"fixtures dir only", func(c *Config) { c.FixturesDir = "/tmp/x" }, ""},
		{"missing target", func(c *Config) {}, "no target"},
		{"bad scheme", func(c *Config) { c.A.Target = "ftp://x" }, "http:// or https://"},
		{"no host", func(c *Config) { c.A.URL = "http:///{file}" }, "with a host"},
		{"id without target", func(c *Config) { c.A.URL = "http://127.0.0.1/{id}" }, "{id} needs --target"},
		{"upload without target", func(c *Config) { c.A.URL = "http://127.0.0.1/{file}"; c.Scenarios = []string{"upload_small_file"} }, "needs --target"},
		{"unknown scenario", func(c *Config) { c.A.Target = "http://h"; c.Scenarios = []string{"download_huge"} }, "unknown scenario"},
		{"negative ramp", func(c *Config) { c.A.Target = "http://h"; c.Ramp = -time.Second }, "--ramp -1s must not be negative"},
		{"negative hold", func(c *Config) { c.A.Target = "http://h"; c.Hold = -time.Second }, "--hold -1s must not be negative"},
		{"zero length", func(c *Config) { c.A.Target = "http://h"; c.Ramp, c.Hold = 0, 0 }, "above zero"},
		{"bad stages", func(c *Config) { c.A.Target = "http://h"; c.Stages = []Stage{{-1, time.Second}} }, "between 0 and"},
		{"zero timeout", func(c *Config) { c.A.Target = "http://h"; c.Timeout = 0 }, "--timeout"},
		{"negative rate", func(c *Config) { c.A.Target = "http://h"; c.Rate = -1 }, "--rate"},
		{"too many workers", func(c *Config) { c.A.Target = "http://h"; c.Workers = 1e6 }, "--workers"},
		{"both credentials", func(c *Config) { c.A.Target = "http://h"; c.AdminSecret, c.Token = "s", "t" }, "not both"},
		{"compare", func(c *Config) { c.A.Target, c.B.Target = "http://a", "http://b" }, ""},
		{"compare mixed", func(c *Config) { c.A.Target, c.B.URL = "http://a", "http://b/{file}" }, "both --target and --target-b"},
		{"compare rounds", func(c *Config) { c.A.Target, c.B.Target, c.Rounds = "http://a", "http://b", 0 }, "--rounds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("Validate = %v, want an error containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDownloadURL(t *testing.T) {
	img := Scenarios()[4] // download_image_manipulated
	tests := []struct {
		ep   Endpoint
		want string
	}{
		{Endpoint{Target: "http://h:1/"}, "http://h:1/v1/files/ID?w=800&b=2"},
		{Endpoint{Target: "http://h:1", URL: "http://n/{file}?x=1"}, "http://n/bench-image-4000x3000.jpg?x=1&w=800&b=2"},
		{Endpoint{Target: "http://h:1", URL: "http://n/f/{id}"}, "http://n/f/ID?w=800&b=2"},
	}
	for _, tc := range tests {
		ep := &endpointRun{Endpoint: tc.ep, ids: map[string]string{img.Fixture.Name: "ID"}}
		if got := ep.downloadURL(img); got != tc.want {
			t.Errorf("%+v: %s, want %s", tc.ep, got, tc.want)
		}
	}
}
