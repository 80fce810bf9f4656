package main

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// tenantWriteFlags are the flags of `tenants create` and `tenants update`.
type tenantWriteFlags struct {
	hosts, adminSecrets                     []string
	settingsFile, jwt, presignKey, anonRole string
	maxBytes, maxFiles                      int64
}

// settingFlags are the flags that change one setting each.
var settingFlags = []string{"tenant-admin-secret", "jwt", "presign-key", "unauthorized-role"}

// tenantWriteCmd is `tenants create ID` or `tenants update ID`. create sends the
// settings of --settings FILE (or none) with the setting flags over them. update
// sends only what is given: --host replaces the hosts; --settings FILE replaces the
// settings (secrets left out of it are kept by the server); a setting flag without
// --settings changes that setting alone (the others are read first and sent back,
// without their secrets and JWT document, which the server keeps); one quota flag
// keeps the other bound.
func tenantWriteCmd(c *adminConfig, verb string) *cobra.Command {
	s := &tenantWriteFlags{}
	cmd := leaf(verb+" ID", verb+" a tenant (flags: what to set)", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		tc, err := c.tenants()
		if err != nil {
			return err
		}
		var t *adminv1.Tenant
		if verb == "create" {
			t, err = s.create(cmd.Context(), tc, cmd.Flags(), a[0])
		} else {
			t, err = s.update(cmd.Context(), tc, cmd.Flags(), a[0])
		}
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), t, func() [][]string { return tenantRows(t) })
	})
	fs := cmd.Flags()
	fs.StringSliceVar(&s.hosts, "host", nil, "a host name selecting the tenant (exact, or *.example.com); repeat or comma-separate")
	fs.StringVar(&s.settingsFile, "settings", "", "a TenantSettings JSON file (- for stdin), e.g. {\"adminSecrets\":[\"...\"],\"limits\":{\"requestsPerSecond\":50}}")
	fs.StringArrayVar(&s.adminSecrets, "tenant-admin-secret", nil, "the tenant's admin secret (repeat for several); replaces those set")
	fs.StringVar(&s.jwt, "jwt", "", "the tenant's JWT configuration, as coffer serve's --jwt-secret")
	fs.StringVar(&s.presignKey, "presign-key", "", "the key (>= 32 bytes) signing the tenant's presigned URLs")
	fs.StringVar(&s.anonRole, "unauthorized-role", "", "the role of the tenant's requests without credentials")
	fs.Int64Var(&s.maxBytes, "max-bytes", 0, "quota: total bytes of its files (0: no bound)")
	fs.Int64Var(&s.maxFiles, "max-files", 0, "quota: number of its files (0: no bound)")
	return cmd
}

// create makes tenant id.
func (s *tenantWriteFlags) create(ctx context.Context, tc adminv1connect.TenantServiceClient, f *pflag.FlagSet, id string) (*adminv1.Tenant, error) {
	settings, err := s.settings(f, nil)
	if err != nil {
		return nil, err
	}
	return tenantOf(tc.CreateTenant(ctx, req(&adminv1.CreateTenantRequest{Id: id, Hosts: s.hosts, Settings: settings,
		Quota: &adminv1.Quota{MaxBytes: s.maxBytes, MaxFiles: s.maxFiles}})))
}

// update changes what the flags give of tenant id, reading it first when a flag
// changes only part of a message the call replaces whole.
func (s *tenantWriteFlags) update(ctx context.Context, tc adminv1connect.TenantServiceClient, f *pflag.FlagSet, id string) (*adminv1.Tenant, error) {
	u := &adminv1.UpdateTenantRequest{Id: id}
	if f.Changed("host") {
		u.Hosts = &adminv1.Hosts{Hosts: s.hosts}
	}
	cur := &adminv1.Tenant{}
	if changedAny(f, settingFlags...) && !f.Changed("settings") || f.Changed("max-bytes") != f.Changed("max-files") {
		var err error
		if cur, err = tenantOf(tc.GetTenant(ctx, req(&adminv1.GetTenantRequest{Id: id}))); err != nil {
			return nil, err
		}
	}
	if changedAny(f, append(settingFlags, "settings")...) {
		settings, err := s.settings(f, cur.GetSettings())
		if err != nil {
			return nil, err
		}
		u.Settings = settings
	}
	if changedAny(f, "max-bytes", "max-files") {
		u.Quota = &adminv1.Quota{MaxBytes: cur.GetQuota().GetMaxBytes(), MaxFiles: cur.GetQuota().GetMaxFiles()}
		ifChanged(f.Changed("max-bytes"), func() { u.Quota.MaxBytes = s.maxBytes })
		ifChanged(f.Changed("max-files"), func() { u.Quota.MaxFiles = s.maxFiles })
	}
	return tenantOf(tc.UpdateTenant(ctx, req(u)))
}

// settings returns the settings to send: --settings FILE's if given, else base's
// (nil: none; the tenant's settings as answered, whose JWT document is left out),
// with the setting flags given over them.
func (s *tenantWriteFlags) settings(f *pflag.FlagSet, base *adminv1.TenantSettings) (*adminv1.TenantSettings, error) {
	out := &adminv1.TenantSettings{}
	if base != nil {
		out = proto.CloneOf(base)
		out.Jwt = "" // answered without its key: left empty, the server keeps it
	}
	if f.Changed("settings") {
		var err error
		if out, err = readSettings(s.settingsFile); err != nil {
			return nil, err
		}
	}
	ifChanged(f.Changed("tenant-admin-secret"), func() { out.AdminSecrets = s.adminSecrets })
	ifChanged(f.Changed("jwt"), func() { out.Jwt = s.jwt })
	ifChanged(f.Changed("presign-key"), func() { out.PresignKey = s.presignKey })
	ifChanged(f.Changed("unauthorized-role"), func() { out.UnauthorizedRole = s.anonRole })
	return out, nil
}
