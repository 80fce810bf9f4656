package app

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/imaging"
)

// logSettings says at start what is on and what is off, so that a missing setting
// shows in the first lines of the log rather than as a 401 or a 501 later.
func (s *Main) logSettings() {
	c := s.cfg
	if c.AdminSecret == "" && c.JWTSecret == "" {
		s.log.Warn("no --admin-secret and no --jwt-secret: every request has the role " + c.UnauthorizedRole +
			", and admin calls (buckets, rules, webhooks, ops) answer 401")
	}
	s.log.Info("settings", "auth", s.authModes(), "metadata", s.metaDesc(), "blobs", s.blobDesc(),
		"images", s.imagesDesc(), "webhooks", fmt.Sprintf("on, %d deliveries at once", c.Webhooks.Workers),
		"metrics", s.metricsDesc(), "access_log", s.accessLogDesc(), "console", s.consoleDesc())
}

// logConsole says, in one plain line, where to open the web console.
func (s *Main) logConsole() {
	if s.console == nil {
		return
	}
	base := "http://" + s.ln.Addr().String()
	if s.cfg.PublicURL != "" {
		base = strings.TrimSuffix(s.cfg.PublicURL, "/")
	}
	s.log.Info("web console at " + base + s.console.Prefixes()[0] + " (sign in with the admin secret or a JWT)")
}

// consoleDesc says where the web console is served.
func (s *Main) consoleDesc() string {
	if s.console == nil {
		return "off"
	}
	return "on at " + s.console.Prefixes()[0]
}

// authModes lists the accepted credentials, without secrets.
func (s *Main) authModes() string {
	c := s.cfg
	var modes []string
	if c.AdminSecret != "" {
		modes = append(modes, "admin secret")
	}
	if c.JWTSecret != "" {
		jwt := "jwt"
		if j, err := auth.ParseJWTConfig(c.JWTSecret); err == nil && j.JWKURL != "" {
			jwt += " (jwks " + j.JWKURL + ")"
		} else if err == nil {
			jwt += " (" + j.Type + ")"
		}
		modes = append(modes, jwt)
	}
	return strings.Join(append(modes, "anonymous as role "+c.UnauthorizedRole), ", ")
}

// metaDesc names the database without credentials.
func (s *Main) metaDesc() string {
	if s.cfg.UsesSQLite() {
		return "sqlite " + filepath.Join(s.cfg.DataDir, "coffer.db")
	}
	if u, err := url.Parse(s.cfg.DatabaseURL); err == nil {
		return "postgres " + u.Host + u.Path
	}
	return "postgres"
}

// blobDesc names the blob store without credentials.
func (s *Main) blobDesc() string {
	if s.cfg.S3Endpoint != "" {
		return "s3 " + strings.TrimRight(s.cfg.S3Endpoint, "/") + "/" + s.cfg.S3Bucket
	}
	return "disk " + filepath.Join(s.cfg.DataDir, "blobs")
}

// imagesDesc says whether transformations are on and under which limits.
func (s *Main) imagesDesc() string {
	if !imaging.Enabled(s.images) {
		return "off (transformations answer 501)"
	}
	users := imaging.Config{Workers: s.cfg.ImageWorkers, UserWorkers: s.cfg.ImageUserWorkers}.PerUserWorkers()
	where := "a child process"
	if s.cfg.ImageWorkersRemote != "" {
		where = "remote workers " + s.cfg.ImageWorkersRemote
	}
	return fmt.Sprintf("on (%s), %d at once (%d per user), %d queued at most (%d per user), cost budget %d, timeout %v",
		where, s.cfg.ImageWorkers, users, s.cfg.ImageQueue, s.cfg.ImageUserQueue, s.cfg.ImageMaxCost, s.cfg.ImageTimeout)
}

// metricsDesc says where /metrics is served and to whom: on the API port, admins
// (and the token's bearer); on --metrics-listen, anyone who reaches it unless a
// token is set.
func (s *Main) metricsDesc() string {
	c := s.cfg
	switch {
	case c.MetricsListen != "" && c.MetricsToken != "":
		return "/metrics on " + c.MetricsListen + ", bearer token"
	case c.MetricsListen != "":
		return "/metrics on " + c.MetricsListen + ", open to anyone who reaches it"
	case c.MetricsToken != "":
		return "/metrics on the API port, admins and bearer token"
	}
	return "/metrics on the API port, admins only"
}

// accessLogDesc says which requests the access log records.
func (s *Main) accessLogDesc() string {
	a := s.cfg.accessLog()
	switch {
	case a.Mode != "on":
		return a.Mode
	case a.ReadsPerSecond == 0:
		return "on, every request"
	}
	return fmt.Sprintf("on, successful reads up to %d lines/s", a.ReadsPerSecond)
}
