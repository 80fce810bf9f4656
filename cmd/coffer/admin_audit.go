package main

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// auditFlags are the flags of `audit query`.
type auditFlags struct {
	tenant, site, host, path, since, until, cache string
	status, limit                                 int32
	json                                          bool
}

// audit is AuditService's client: with --tenant and a platform secret, the
// platform's credential alone (it may read any tenant); else the admin credentials.
func (c *adminConfig) audit(tenant string) adminv1connect.AuditServiceClient {
	hc := c.client()
	if tenant != "" && c.PlatformSecret != "" {
		hc = &http.Client{Transport: platformCredentials{c.PlatformSecret}, Timeout: c.Timeout}
	}
	return adminv1connect.NewAuditServiceClient(hc, c.base())
}

// auditCmd is `coffer admin audit`.
func auditCmd(c *adminConfig) *cobra.Command {
	f := &auditFlags{}
	query := leaf("query", "Query the audit log of the requests sites served", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		r, err := f.request(time.Now())
		if err != nil {
			return err
		}
		res, err := c.audit(f.tenant).QueryAudit(cmd.Context(), req(r))
		if err != nil {
			return err
		}
		out := *c
		if f.json {
			out.Output = "json"
		}
		return emit(&out, cmd.OutOrStdout(), res.Msg, func() [][]string { return auditRows(res.Msg.GetRecords()...) })
	})
	fs := query.Flags()
	fs.StringVar(&f.tenant, "tenant", "", "the tenant (another than the one reached: needs the platform secret)")
	fs.StringVar(&f.site, "site", "", "the site's id")
	fs.StringVar(&f.host, "host", "", "the request's host")
	fs.StringVar(&f.path, "path", "", "a glob of the request's path ('/assets/*')")
	fs.StringVar(&f.since, "since", "", "records from: a duration back from now (1h) or an RFC 3339 time")
	fs.StringVar(&f.until, "until", "", "records before: a duration back from now or an RFC 3339 time")
	fs.Int32Var(&f.status, "status", 0, "the status answered (0: any)")
	fs.StringVar(&f.cache, "cache", "", "the cache outcome: HIT, MISS, STALE, REVALIDATED or BYPASS")
	fs.Int32Var(&f.limit, "limit", 0, "at most this many records, 1..10000 (0: 100)")
	fs.BoolVar(&f.json, "json", false, "print the answer as JSON (as --output json)")
	return group("audit", "The audit log of the requests sites served", query)
}

// request builds the query, times relative to now.
func (f *auditFlags) request(now time.Time) (*adminv1.QueryAuditRequest, error) {
	r := &adminv1.QueryAuditRequest{Tenant: f.tenant, Site: f.site, Host: f.host, Path: f.path, Status: f.status,
		Cache: strings.ToUpper(f.cache), Limit: f.limit}
	var err error
	if r.Since, err = parseWhen("--since", f.since, now); err != nil {
		return nil, err
	}
	if r.Until, err = parseWhen("--until", f.until, now); err != nil {
		return nil, err
	}
	return r, nil
}

// parseWhen reads a time flag: "" for none, a positive duration back from now
// ("90m", "1h"), or an RFC 3339 time ("2026-11-25T06:00:00Z").
func parseWhen(flag, s string, now time.Time) (*timestamppb.Timestamp, error) {
	if s == "" {
		return nil, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return nil, fmt.Errorf("%s %q: a duration back from now is positive", flag, s)
		}
		return timestamppb.New(now.Add(-d)), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Errorf("%s %q: neither a duration (1h) nor an RFC 3339 time (2026-11-25T06:00:00Z)", flag, s)
	}
	ts := timestamppb.New(t)
	if err := ts.CheckValid(); err != nil {
		return nil, fmt.Errorf("%s %q: out of range", flag, s)
	}
	return ts, nil
}

// auditRows is the table of audit records.
func auditRows(rs ...*adminv1.AuditRecord) [][]string {
	rows := [][]string{{"TIME", "STATUS", "CACHE", "BYTES", "MS", "METHOD", "URL"}}
	for _, r := range rs {
		rows = append(rows, []string{r.GetTime().AsTime().Format("2006-01-02 15:04:05.000"), fmt.Sprint(r.GetStatus()),
			r.GetCache(), fmt.Sprint(r.GetBytes()), fmt.Sprintf("%.1f", r.GetDurationMs()), r.GetMethod(),
			r.GetHost() + r.GetPath()})
	}
	return rows
}
