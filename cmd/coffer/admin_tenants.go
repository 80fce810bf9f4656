package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
)

// platformCredentials adds the platform secret, and no other credential, to every
// request: TenantService refuses a tenant's admin secret or JWT, and a server
// that does not know them would refuse the call for them.
type platformCredentials struct{ secret string }

// RoundTrip sends r with the platform secret.
func (p platformCredentials) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(rpcapi.HeaderPlatformSecret, p.secret)
	return http.DefaultTransport.RoundTrip(r)
}

// tenants is TenantService's client, with the platform secret.
func (c *adminConfig) tenants() (adminv1connect.TenantServiceClient, error) {
	if c.PlatformSecret == "" {
		return nil, errors.New("managing tenants needs the platform secret: --platform-secret or COFFER_PLATFORM_SECRET")
	}
	hc := &http.Client{Transport: platformCredentials{c.PlatformSecret}, Timeout: c.Timeout}
	return adminv1connect.NewTenantServiceClient(hc, c.base()), nil
}

// tenantsCmd is `coffer admin tenants`.
func tenantsCmd(c *adminConfig) *cobra.Command {
	get := tenantIDCmd(c, "get", "Show a tenant", func(ctx context.Context, tc adminv1connect.TenantServiceClient, id string) (*adminv1.Tenant, error) {
		return tenantOf(tc.GetTenant(ctx, req(&adminv1.GetTenantRequest{Id: id})))
	})
	suspend := tenantIDCmd(c, "suspend", "Refuse every request to a tenant (its data is kept)", func(ctx context.Context, tc adminv1connect.TenantServiceClient, id string) (*adminv1.Tenant, error) {
		return tenantOf(tc.SuspendTenant(ctx, req(&adminv1.SuspendTenantRequest{Id: id})))
	})
	resume := tenantIDCmd(c, "resume", "Serve a suspended tenant again", func(ctx context.Context, tc adminv1connect.TenantServiceClient, id string) (*adminv1.Tenant, error) {
		return tenantOf(tc.ResumeTenant(ctx, req(&adminv1.ResumeTenantRequest{Id: id})))
	})
	return group("tenants", "Tenants of a multi-tenant server (needs the platform secret)", tenantsListCmd(c), get,
		tenantWriteCmd(c, "create"), tenantWriteCmd(c, "update"), suspend, resume, tenantDeleteCmd(c), tenantUsageCmd(c))
}

// tenantIDCmd is `tenants VERB ID`, answering the tenant fn returns.
func tenantIDCmd(c *adminConfig, verb, short string, fn func(context.Context, adminv1connect.TenantServiceClient, string) (*adminv1.Tenant, error)) *cobra.Command {
	return leaf(verb+" ID", short, cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		tc, err := c.tenants()
		if err != nil {
			return err
		}
		t, err := fn(cmd.Context(), tc, a[0])
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), t, func() [][]string { return tenantRows(t) })
	})
}

// tenantOf returns the tenant of a call's response, or the call's error.
func tenantOf[T any, PT interface {
	*T
	GetTenant() *adminv1.Tenant
}](res *connect.Response[T], err error) (*adminv1.Tenant, error) {
	if err != nil {
		return nil, err
	}
	return PT(res.Msg).GetTenant(), nil
}

// tenantsListCmd is `tenants list [--page-size N] [--page-token T]`.
func tenantsListCmd(c *adminConfig) *cobra.Command {
	var token string
	var size int32
	list := leaf("list", "List the tenants, one page", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		tc, err := c.tenants()
		if err != nil {
			return err
		}
		res, err := tc.ListTenants(cmd.Context(), req(&adminv1.ListTenantsRequest{PageSize: size, PageToken: token}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			return withNextPage(tenantRows(res.Msg.GetTenants()...), res.Msg.GetNextPageToken())
		})
	})
	list.Flags().Int32Var(&size, "page-size", 0, "tenants per page, 1..1000 (0: 100)")
	list.Flags().StringVar(&token, "page-token", "", "the next page's token, from the previous page")
	return list
}

// tenantDeleteCmd is `tenants delete ID`.
func tenantDeleteCmd(c *adminConfig) *cobra.Command {
	return leaf("delete ID", "Delete a tenant: refused at once, its data removed in the background", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		tc, err := c.tenants()
		if err != nil {
			return err
		}
		res, err := tc.DeleteTenant(cmd.Context(), req(&adminv1.DeleteTenantRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETING", a[0]) })
	})
}

// tenantUsageCmd is `tenants usage ID`.
func tenantUsageCmd(c *adminConfig) *cobra.Command {
	return leaf("usage ID", "Show what a tenant stores and what this node served it", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		tc, err := c.tenants()
		if err != nil {
			return err
		}
		res, err := tc.GetTenantUsage(cmd.Context(), req(&adminv1.GetTenantUsageRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		u := res.Msg.GetUsage()
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			return [][]string{{"BYTES", "FILES", "SERVED BYTES (THIS NODE)", "REQUESTS (THIS NODE)"},
				{fmt.Sprint(u.GetBytes()), fmt.Sprint(u.GetFiles()), fmt.Sprint(u.GetServedBytes()), fmt.Sprint(u.GetRequests())}}
		})
	})
}

// tenantRows is the table of tenants.
func tenantRows(ts ...*adminv1.Tenant) [][]string {
	rows := [][]string{{"ID", "STATE", "HOSTS", "MAX BYTES", "MAX FILES", "ADMIN SECRETS", "STORAGE", "UPDATED"}}
	for _, t := range ts {
		state := strings.ToLower(strings.TrimPrefix(t.GetState().String(), "TENANT_STATE_"))
		storage := t.GetSettings().GetStorage().GetKind()
		if storage == "" {
			storage = "shared"
		}
		rows = append(rows, []string{t.GetId(), state, strings.Join(t.GetHosts(), ","), fmt.Sprint(t.GetQuota().GetMaxBytes()),
			fmt.Sprint(t.GetQuota().GetMaxFiles()), fmt.Sprint(t.GetSettings().GetAdminSecretsCount()), storage,
			t.GetUpdateTime().AsTime().Format("2006-01-02 15:04:05")})
	}
	return rows
}

// readSettings reads a TenantSettings JSON file ("-": standard input), at most
// 1 MiB; a field the contract does not have is an error, as on the server.
func readSettings(name string) (*adminv1.TenantSettings, error) {
	s := &adminv1.TenantSettings{}
	return s, readJSON(name, "a settings file", s)
}

// changedAny reports whether any of the named flags was given.
func changedAny(f *pflag.FlagSet, names ...string) bool {
	for _, n := range names {
		if f.Changed(n) {
			return true
		}
	}
	return false
}
