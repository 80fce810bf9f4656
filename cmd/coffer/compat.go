package main

import (
	"github.com/coffer/coffer/app"
	"github.com/spf13/pflag"
)

// compatFlags registers the flags of how closely the /v1 face follows hasura-storage.
func compatFlags(fs *pflag.FlagSet, c *app.CompatConfig) {
	d := app.DefaultConfig().Compat
	fs.BoolVar(&c.JWTAdminRole, "jwt-admin-role", d.JWTAdminRole, `a JWT acting as role "admin" has every permission, as Hasura's admin role does; false: "admin" is an ordinary role that needs rules`)
	fs.BoolVar(&c.HideForbidden, "hide-forbidden", false, "answer 404 instead of 403 when a role has no permission at all on a bucket, so a file's existence is never revealed (hasura-storage answers 403)")
	fs.StringVar(&c.ETag, "etag", d.ETag, "hash of an uploaded file's ETag: md5 (hasura-storage's, ~1.2 s of CPU per GiB, slower than a disk) or blake3 (the BLAKE3-256 that b3sum prints, ~0.2 s/GiB); files keep the ETag they were stored with")
}
