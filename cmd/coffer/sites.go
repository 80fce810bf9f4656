package main

import (
	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/sites"
	"github.com/spf13/pflag"
)

// siteFlags registers the flags of sites into c.
func siteFlags(fs *pflag.FlagSet, c *sites.Config) {
	d := app.DefaultConfig().Sites
	fs.BoolVar(&c.On, "sites", d.On, "serve sites: requests for a site's host go to its routes (sites are managed through the management API's SiteService and coffer admin sites)")
	fs.StringVar(&c.EdgeDir, "edge-cache-dir", d.EdgeDir, "directory of the sites' pull-through cache of upstream objects (empty: <data-dir>/edge)")
	fs.Int64Var(&c.EdgeSize, "edge-cache-size", d.EdgeSize, "bytes the sites' pull-through cache keeps on disk at most (fills in progress included)")
	fs.Int64Var(&c.EdgeMaxObject, "edge-max-object", d.EdgeMaxObject, "bytes of the largest upstream object the pull-through cache keeps; larger ones are streamed through uncached")
	fs.StringVar(&c.AuditDir, "audit-dir", d.AuditDir, "directory of the sites' audit log, one JSON line per request served (empty: <data-dir>/audit; - turns it off)")
	fs.Int64Var(&c.AuditSize, "audit-size", d.AuditSize, "bytes the audit log's files keep at most; the oldest rotated file goes first")
	fs.StringVar(&c.AuditCollector, "audit-collector", d.AuditCollector, "URL the audit records are POSTed to in batches (application/x-ndjson), from the log files, resuming after restarts; empty: not shipped")
	fs.DurationVar(&c.Refresh, "sites-refresh", d.Refresh, "how often every node reads the sites again (changes on another node arrive at once through PostgreSQL's notifications)")
}
