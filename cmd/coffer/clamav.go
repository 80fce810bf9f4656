package main

import (
	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// clamavFlags registers the flags of virus scanning into c.
func clamavFlags(fs *pflag.FlagSet, c *app.ClamAVConfig) {
	d := app.DefaultConfig().ClamAV
	fs.StringVar(&c.Addr, "clamav-addr", "", "clamd address (host:port, tcp://host:port or unix:/path): scan every upload and replace as it streams; empty = no scanning")
	fs.BoolVar(&c.FailOpen, "clamav-fail-open", false, "store uploads unscanned (with a warning in the log) when clamd is unavailable, instead of answering 503")
	fs.DurationVar(&c.Timeout, "clamav-timeout", d.Timeout, "clamd connect and write timeout, and the wait for its verdict after the last byte")
}
