package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
)

// recordedSites is a SiteService and an AuditService that record the calls they
// get (method, message, credentials) and answer site www to any id but "nope",
// which is NOT_FOUND.
type recordedSites struct {
	adminv1connect.UnimplementedSiteServiceHandler
	adminv1connect.UnimplementedAuditServiceHandler
	mu    sync.Mutex
	calls []string
	msgs  []proto.Message
	hdr   http.Header
}

// www is the site recordedSites answers.
func www() *adminv1.Site {
	return &adminv1.Site{Id: "www", Hosts: []string{"www.test", "test"}, UpdatedAt: timestamppb.New(time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)),
		Routes: []*adminv1.Route{{Path: "/assets/*", Target: &adminv1.Target{Kind: &adminv1.Target_Bucket{
			Bucket: &adminv1.BucketTarget{Id: "public", Prefix: "site/"}}}}}}
}

// record notes a call and returns NOT_FOUND for site "nope".
func (r *recordedSites) record(name string, h http.Header, m proto.Message, id string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls, r.msgs, r.hdr = append(r.calls, name), append(r.msgs, m), h
	if id == "nope" {
		return connect.NewError(connect.CodeNotFound, errors.New("site \"nope\" not found"))
	}
	return nil
}

// CreateSite records the call.
func (r *recordedSites) CreateSite(_ context.Context, q *connect.Request[adminv1.CreateSiteRequest]) (*connect.Response[adminv1.CreateSiteResponse], error) {
	return connect.NewResponse(&adminv1.CreateSiteResponse{Site: www()}), r.record("Create", q.Header(), q.Msg, "")
}

// GetSite records the call.
func (r *recordedSites) GetSite(_ context.Context, q *connect.Request[adminv1.GetSiteRequest]) (*connect.Response[adminv1.GetSiteResponse], error) {
	if err := r.record("Get", q.Header(), q.Msg, q.Msg.GetId()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&adminv1.GetSiteResponse{Site: www()}), nil
}

// ListSites records the call.
func (r *recordedSites) ListSites(_ context.Context, q *connect.Request[adminv1.ListSitesRequest]) (*connect.Response[adminv1.ListSitesResponse], error) {
	return connect.NewResponse(&adminv1.ListSitesResponse{Sites: []*adminv1.Site{www()}}), r.record("List", q.Header(), q.Msg, "")
}

// UpdateSite records the call.
func (r *recordedSites) UpdateSite(_ context.Context, q *connect.Request[adminv1.UpdateSiteRequest]) (*connect.Response[adminv1.UpdateSiteResponse], error) {
	return connect.NewResponse(&adminv1.UpdateSiteResponse{Site: www()}), r.record("Update", q.Header(), q.Msg, q.Msg.GetId())
}

// DeleteSite records the call.
func (r *recordedSites) DeleteSite(_ context.Context, q *connect.Request[adminv1.DeleteSiteRequest]) (*connect.Response[adminv1.DeleteSiteResponse], error) {
	return connect.NewResponse(&adminv1.DeleteSiteResponse{}), r.record("Delete", q.Header(), q.Msg, q.Msg.GetId())
}

// PurgeSite records the call.
func (r *recordedSites) PurgeSite(_ context.Context, q *connect.Request[adminv1.PurgeSiteRequest]) (*connect.Response[adminv1.PurgeSiteResponse], error) {
	return connect.NewResponse(&adminv1.PurgeSiteResponse{Removed: 3, Broadcast: true}), r.record("Purge", q.Header(), q.Msg, q.Msg.GetSiteId())
}

// GetSiteStats records the call.
func (r *recordedSites) GetSiteStats(_ context.Context, q *connect.Request[adminv1.GetSiteStatsRequest]) (*connect.Response[adminv1.GetSiteStatsResponse], error) {
	return connect.NewResponse(&adminv1.GetSiteStatsResponse{Requests: 10, Hits: 8, Misses: 2, HitRatio: 0.8}),
		r.record("Stats", q.Header(), q.Msg, q.Msg.GetSiteId())
}

// QueryAudit records the call and answers one record.
func (r *recordedSites) QueryAudit(_ context.Context, q *connect.Request[adminv1.QueryAuditRequest]) (*connect.Response[adminv1.QueryAuditResponse], error) {
	rec := &adminv1.AuditRecord{Time: timestamppb.New(time.Date(2026, 11, 25, 6, 1, 2, 0, time.UTC)), Status: 200, Cache: "HIT",
		Bytes: 512, DurationMs: 1.25, Method: "GET", Host: "www.test", Path: "/assets/a.js"}
	return connect.NewResponse(&adminv1.QueryAuditResponse{Records: []*adminv1.AuditRecord{rec}}),
		r.record("Audit", q.Header(), q.Msg, q.Msg.GetSite())
}

// take returns the calls recorded since the last take, their messages and the
// last call's headers.
func (r *recordedSites) take() (string, []proto.Message, http.Header) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls, msgs := strings.Join(r.calls, ","), r.msgs
	r.calls, r.msgs = nil, nil
	return calls, msgs, r.hdr
}

// siteServer serves a recordedSites on 127.0.0.1.
func siteServer(t *testing.T) (*recordedSites, string) {
	rec := &recordedSites{}
	mux := http.NewServeMux()
	mux.Handle(adminv1connect.NewSiteServiceHandler(rec))
	mux.Handle(adminv1connect.NewAuditServiceHandler(rec))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

// siteDocFile is a site document with a secret, as a user writes it.
const siteDocFile = `{"id":"www","hosts":["www.test"],"routes":[{"path":"/*","target":{"s3":{"bucket":"site-bucket","accessKeyId":"AKID",
	"secretAccessKey":"s3-secret","timeout":"5s"}},"edge":{"ttl":"60s","negativeTtl":"0s"},"compress":false}],
	"purgeWebhooks":[{"url":"https://cdn.test/purge","secret":"hook"}],"audit":false}`

// TestAdminSites: each sites command sends its call with the admin secret, the
// document of --file as it is written, and prints the answer.
func TestAdminSites(t *testing.T) {
	rec, url := siteServer(t)
	t.Setenv("COFFER_ADMIN_SECRET", "tenant-admin")
	t.Setenv("COFFER_PLATFORM_SECRET", "plat")
	file := writeFile(t, siteDocFile)
	for _, tc := range []struct {
		args  []string
		calls string
		out   string
	}{
		{[]string{"create", "--file", file}, "Create", `"id":"www"`},
		{[]string{"update", "www", "--file", file}, "Update", `"prefix":"site/"`},
		{[]string{"get", "www"}, "Get", `"hosts":["www.test","test"]`},
		{[]string{"list"}, "List", `"sites":[{"id":"www"`},
		{[]string{"delete", "www"}, "Delete", "{}"},
		{[]string{"purge", "www", "--path", "/a", "--path", "/b", "--prefix", "/assets/", "--tag", "v1"}, "Purge", `"removed":3`},
		{[]string{"stats", "www"}, "Stats", `"hitRatio":0.8`},
	} {
		out, err := runAdmin(t, url, append([]string{"sites"}, tc.args...)...)
		calls, msgs, hdr := rec.take()
		if err != nil || calls != tc.calls || !strings.Contains(strings.Join(strings.Fields(out), ""), tc.out) {
			t.Fatalf("%v: calls %s, err %v, out %s", tc.args, calls, err, out)
		}
		if hdr.Get("X-Hasura-Admin-Secret") != "tenant-admin" || hdr.Get("X-Coffer-Platform-Secret") != "" {
			t.Fatalf("%v: headers %v", tc.args, hdr)
		}
		checkSiteMsg(t, tc.args, msgs[0])
	}
	out, err := runAdmin(t, url, "--output", "table", "sites", "get", "www")
	if err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "www www.test,test 1 2026-11-25 06:00:00") ||
		!strings.Contains(strings.Join(strings.Fields(out), " "), "/assets/* bucket:public/site/") {
		t.Fatalf("table: %v\n%s", err, out)
	}
	_, err = runAdmin(t, url, "sites", "get", "nope")
	if err == nil || err.Error() != `not_found: site "nope" not found` {
		t.Fatalf("error %v", err)
	}
	rec.take()
	bad := writeFile(t, `{"id":"www","route":[]}`)
	_, err = runAdmin(t, url, "sites", "create", "--file", bad)
	if calls, _, _ := rec.take(); err == nil || !strings.Contains(err.Error(), "route") || calls != "" {
		t.Fatalf("a misspelt document: %v, calls %q", err, calls)
	}
}

// checkSiteMsg checks what a sites command sent.
func checkSiteMsg(t *testing.T, args []string, m proto.Message) {
	t.Helper()
	switch m := m.(type) {
	case *adminv1.CreateSiteRequest, *adminv1.UpdateSiteRequest:
		s := m.(interface{ GetSite() *adminv1.Site }).GetSite()
		r := s.GetRoutes()[0]
		if s.GetId() != "www" || r.GetTarget().GetS3().GetSecretAccessKey() != "s3-secret" || r.GetCompress() ||
			r.Compress == nil || r.GetEdge().GetNegativeTtl() == nil || r.GetEdge().GetTtl().AsDuration() != time.Minute ||
			s.Audit == nil || s.GetPurgeWebhooks()[0].GetSecret() != "hook" {
			t.Fatalf("%v sent %v", args, m)
		}
	case *adminv1.PurgeSiteRequest:
		want := &adminv1.PurgeSiteRequest{SiteId: "www", Paths: []string{"/a", "/b"}, Prefixes: []string{"/assets/"}, Tags: []string{"v1"}}
		if !proto.Equal(m, want) {
			t.Fatalf("purge sent %v", m)
		}
	}
}

// TestAdminAudit: audit query sends the filter (times relative to now or RFC
// 3339), with the admin secret, or with --tenant and a platform secret that alone;
// the table shows time, status, cache, bytes, ms, method and host+path.
func TestAdminAudit(t *testing.T) {
	rec, url := siteServer(t)
	t.Setenv("COFFER_ADMIN_SECRET", "tenant-admin")
	t.Setenv("COFFER_PLATFORM_SECRET", "plat")
	before := time.Now()
	out, err := runAdmin(t, url, "--output", "table", "audit", "query", "--site", "www", "--host", "www.test",
		"--path", "/assets/*", "--since", "1h", "--until", "2026-11-25T07:00:00Z", "--status", "200", "--cache", "hit", "--limit", "5")
	calls, msgs, hdr := rec.take()
	if err != nil || calls != "Audit" || hdr.Get("X-Hasura-Admin-Secret") != "tenant-admin" || hdr.Get("X-Coffer-Platform-Secret") != "" {
		t.Fatalf("query: %v, calls %s, headers %v", err, calls, hdr)
	}
	q := msgs[0].(*adminv1.QueryAuditRequest)
	since := q.GetSince().AsTime()
	if q.GetSite() != "www" || q.GetHost() != "www.test" || q.GetPath() != "/assets/*" || q.GetStatus() != 200 ||
		q.GetCache() != "HIT" || q.GetLimit() != 5 || q.GetTenant() != "" ||
		!q.GetUntil().AsTime().Equal(time.Date(2026, 11, 25, 7, 0, 0, 0, time.UTC)) ||
		since.Before(before.Add(-time.Hour-time.Second)) || since.After(time.Now().Add(-time.Hour)) {
		t.Fatalf("query sent %v", q)
	}
	if got := strings.Join(strings.Fields(out), " "); !strings.Contains(got, "TIME STATUS CACHE BYTES MS METHOD URL") ||
		!strings.Contains(got, "2026-11-25 06:01:02.000 200 HIT 512 1.2 GET www.test/assets/a.js") {
		t.Fatalf("table:\n%s", out)
	}
	out, err = runAdmin(t, url, "--output", "table", "audit", "query", "--tenant", "beta", "--json")
	calls, msgs, hdr = rec.take()
	if err != nil || calls != "Audit" || msgs[0].(*adminv1.QueryAuditRequest).GetTenant() != "beta" ||
		hdr.Get("X-Coffer-Platform-Secret") != "plat" || hdr.Get("X-Hasura-Admin-Secret") != "" ||
		!strings.Contains(strings.Join(strings.Fields(out), ""), `"durationMs":1.25`) {
		t.Fatalf("--tenant --json: %v, calls %s, headers %v\n%s", err, calls, hdr, out)
	}
	for _, bad := range [][]string{{"--since", "yesterday"}, {"--until", "-1h"}, {"--since", "2026-13-01T00:00:00Z"}} {
		_, err := runAdmin(t, url, append([]string{"audit", "query"}, bad...)...)
		if calls, _, _ := rec.take(); err == nil || !strings.Contains(err.Error(), bad[0]) || calls != "" {
			t.Fatalf("%v: %v, calls %q", bad, err, calls)
		}
	}
}
