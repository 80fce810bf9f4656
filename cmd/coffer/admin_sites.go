package main

import (
	"context"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"github.com/spf13/cobra"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/site"
)

// sites is SiteService's client, with the admin credentials.
func (c *adminConfig) sites() adminv1connect.SiteServiceClient {
	return adminv1connect.NewSiteServiceClient(c.client(), c.base())
}

// sitesCmd is `coffer admin sites`.
func sitesCmd(c *adminConfig) *cobra.Command {
	get := siteIDCmd(c, "get", "Show a site and its routes", func(ctx context.Context, id string) (*adminv1.Site, error) {
		return siteOf(c.sites().GetSite(ctx, req(&adminv1.GetSiteRequest{Id: id})))
	})
	list := leaf("list", "List the tenant's sites", cobra.NoArgs, func(cmd *cobra.Command, _ []string) error {
		res, err := c.sites().ListSites(cmd.Context(), req(&adminv1.ListSitesRequest{}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return siteRows(res.Msg.GetSites()...) })
	})
	del := leaf("delete ID", "Delete a site and free its hosts", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.sites().DeleteSite(cmd.Context(), req(&adminv1.DeleteSiteRequest{Id: a[0]}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string { return lines("DELETED", a[0]) })
	})
	return group("sites", "Sites of the tenant: hosts, routes, purges, stats (needs the tenant's admin)",
		list, get, siteWriteCmd(c, "create"), siteWriteCmd(c, "update"), del, sitePurgeCmd(c), siteStatsCmd(c))
}

// siteIDCmd is `sites VERB ID`, answering the site fn returns with its routes.
func siteIDCmd(c *adminConfig, verb, short string, fn func(context.Context, string) (*adminv1.Site, error)) *cobra.Command {
	return leaf(verb+" ID", short, cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		s, err := fn(cmd.Context(), a[0])
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), s, func() [][]string { return append(siteRows(s), routeRows(s)...) })
	})
}

// siteOf returns the site of a call's response, or the call's error.
func siteOf[T any, PT interface {
	*T
	GetSite() *adminv1.Site
}](res *connect.Response[T], err error) (*adminv1.Site, error) {
	if err != nil {
		return nil, err
	}
	return PT(res.Msg).GetSite(), nil
}

// siteWriteCmd is `sites create --file F` or `sites update ID --file F`: the file
// is the site's JSON document (the Site message's JSON, a misspelt field an error).
func siteWriteCmd(c *adminConfig, verb string) *cobra.Command {
	var file string
	use, args := "create --file site.json", cobra.NoArgs
	if verb == "update" {
		use, args = "update ID --file site.json", cobra.ExactArgs(1)
	}
	cmd := leaf(use, verb+" a site from its JSON document", args, func(cmd *cobra.Command, a []string) error {
		doc, err := readSite(file)
		if err != nil {
			return err
		}
		var s *adminv1.Site
		if verb == "create" {
			s, err = siteOf(c.sites().CreateSite(cmd.Context(), req(&adminv1.CreateSiteRequest{Site: doc})))
		} else {
			s, err = siteOf(c.sites().UpdateSite(cmd.Context(), req(&adminv1.UpdateSiteRequest{Id: a[0], Site: doc})))
		}
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), s, func() [][]string { return append(siteRows(s), routeRows(s)...) })
	})
	cmd.Flags().StringVar(&file, "file", "", "the site's JSON document (\"-\": standard input)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// readSite reads a site document ("-": standard input), at most 1 MiB. It is
// checked as the server checks it (site.Parse), which also accepts durations in
// Go's form ("1h", "90m"), and converted to the message field for field.
func readSite(name string) (*adminv1.Site, error) {
	b, err := readInput(name, "a site document")
	if err != nil {
		return nil, err
	}
	doc, err := site.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", name, coffer.ErrorMessage(err))
	}
	return rpcapi.SiteMessage(doc), nil
}

// sitePurgeCmd is `sites purge ID [--path P]... [--prefix P]... [--tag T]...`.
func sitePurgeCmd(c *adminConfig) *cobra.Command {
	var paths, prefixes, tags []string
	cmd := leaf("purge ID", "Drop a site's cached content on every node (nothing given: all of it)", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.sites().PurgeSite(cmd.Context(), req(&adminv1.PurgeSiteRequest{SiteId: a[0], Paths: paths,
			Prefixes: prefixes, Tags: tags}))
		if err != nil {
			return err
		}
		return emit(c, cmd.OutOrStdout(), res.Msg, func() [][]string {
			return [][]string{{"REMOVED (THIS NODE)", "BROADCAST"}, {fmt.Sprint(res.Msg.GetRemoved()), fmt.Sprint(res.Msg.GetBroadcast())}}
		})
	})
	cmd.Flags().StringArrayVar(&paths, "path", nil, "an exact request path to drop (repeatable)")
	cmd.Flags().StringArrayVar(&prefixes, "prefix", nil, "a path prefix to drop (repeatable)")
	cmd.Flags().StringArrayVar(&tags, "tag", nil, "a surrogate key to drop (repeatable)")
	return cmd
}

// siteStatsCmd is `sites stats ID`.
func siteStatsCmd(c *adminConfig) *cobra.Command {
	return leaf("stats ID", "Show what this node served for a site since it started", cobra.ExactArgs(1), func(cmd *cobra.Command, a []string) error {
		res, err := c.sites().GetSiteStats(cmd.Context(), req(&adminv1.GetSiteStatsRequest{SiteId: a[0]}))
		if err != nil {
			return err
		}
		m := res.Msg
		return emit(c, cmd.OutOrStdout(), m, func() [][]string {
			return [][]string{{"REQUESTS", "BYTES", "HITS", "MISSES", "STALE", "REVALIDATED", "BYPASS", "HIT RATIO"},
				{fmt.Sprint(m.GetRequests()), fmt.Sprint(m.GetBytes()), fmt.Sprint(m.GetHits()), fmt.Sprint(m.GetMisses()),
					fmt.Sprint(m.GetStale()), fmt.Sprint(m.GetRevalidated()), fmt.Sprint(m.GetBypass()),
					fmt.Sprintf("%.1f%%", 100*m.GetHitRatio())}}
		})
	})
}

// siteRows is the table of sites.
func siteRows(ss ...*adminv1.Site) [][]string {
	rows := [][]string{{"ID", "HOSTS", "ROUTES", "UPDATED"}}
	for _, s := range ss {
		rows = append(rows, []string{s.GetId(), strings.Join(s.GetHosts(), ","), fmt.Sprint(len(s.GetRoutes())),
			s.GetUpdatedAt().AsTime().Format("2006-01-02 15:04:05")})
	}
	return rows
}

// routeRows is the table of a site's routes, after a blank line.
func routeRows(s *adminv1.Site) [][]string {
	rows := [][]string{{}, {"PATH", "TARGET"}}
	for _, r := range s.GetRoutes() {
		rows = append(rows, []string{r.GetPath(), targetString(r.GetTarget())})
	}
	return rows
}

// targetString is a route's target in one word, as the audit log names it.
func targetString(t *adminv1.Target) string {
	switch k := t.GetKind().(type) {
	case *adminv1.Target_Bucket:
		return "bucket:" + k.Bucket.GetId() + "/" + k.Bucket.GetPrefix()
	case *adminv1.Target_Http:
		return "http:" + k.Http.GetUrl()
	case *adminv1.Target_S3:
		return "s3:" + k.S3.GetBucket() + "/" + k.S3.GetPrefix()
	case *adminv1.Target_Redirect:
		return fmt.Sprintf("redirect %d %s", k.Redirect.GetStatus(), k.Redirect.GetTo())
	}
	return "(none)"
}
