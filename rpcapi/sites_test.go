package rpcapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/site"
	"github.com/coffer/coffer/site/audit"
)

// fakeSites is an in-memory rpcapi.SiteAdmin. It keeps the sites it is given with
// their secrets in clear and answers them so, as a careless server would: the face
// must drop the secrets itself. It counts its calls, so that a refused call can be
// shown not to have reached it, and keeps the sites (as their JSON) and purges it
// was given.
type fakeSites struct {
	mu     sync.Mutex
	sites  map[string]site.Document
	docs   []string     // the JSON of every site passed in, as passed
	purges []site.Purge // every purge passed in
	calls  atomic.Int64
}

var _ rpcapi.SiteAdmin = (*fakeSites)(nil)

func newFakeSites() *fakeSites { return &fakeSites{sites: map[string]site.Document{}} }

// take records s and checks it has an id.
func (f *fakeSites) take(s *site.Document) (site.Document, error) {
	f.calls.Add(1)
	doc, err := json.Marshal(s)
	if err != nil {
		return site.Document{}, err
	}
	f.docs = append(f.docs, string(doc))
	if s.ID == "" {
		return *s, coffer.InvalidField("id", "a site id is required")
	}
	return *s, nil
}

// CreateSite stores s; ECONFLICT if its id exists.
func (f *fakeSites) CreateSite(_ context.Context, s *site.Document) (*site.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.take(s)
	if err != nil {
		return nil, err
	}
	if _, ok := f.sites[st.ID]; ok {
		return nil, coffer.Errorf(coffer.ECONFLICT, "site %q already exists", st.ID)
	}
	st.CreatedAt = time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	st.UpdatedAt = st.CreatedAt
	f.sites[st.ID] = st
	return &st, nil
}

// GetSite returns site id.
func (f *fakeSites) GetSite(_ context.Context, id string) (*site.Document, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.sites[id]
	if !ok {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "site %q not found", id)
	}
	return &st, nil
}

// ListSites returns every site by id.
func (f *fakeSites) ListSites(context.Context) ([]*site.Document, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.sites))
	for id := range f.sites {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]*site.Document, len(ids))
	for i, id := range ids {
		st := f.sites[id]
		out[i] = &st
	}
	return out, nil
}

// UpdateSite replaces site id; s must name it.
func (f *fakeSites) UpdateSite(_ context.Context, id string, s *site.Document) (*site.Document, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := f.take(s)
	if err != nil {
		return nil, err
	}
	old, ok := f.sites[id]
	if !ok || st.ID != id {
		return nil, coffer.Errorf(coffer.ENOTFOUND, "site %q not found (site %q)", id, st.ID)
	}
	st.CreatedAt, st.UpdatedAt = old.CreatedAt, old.CreatedAt.Add(time.Minute)
	f.sites[id] = st
	return &st, nil
}

// DeleteSite removes site id.
func (f *fakeSites) DeleteSite(_ context.Context, id string) error {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sites[id]; !ok {
		return coffer.Errorf(coffer.ENOTFOUND, "site %q not found", id)
	}
	delete(f.sites, id)
	return nil
}

// PurgeSite records p and answers the number of entries it names.
func (f *fakeSites) PurgeSite(_ context.Context, id string, p site.Purge) (int, bool, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sites[id]; !ok {
		return 0, false, coffer.Errorf(coffer.ENOTFOUND, "site %q not found", id)
	}
	f.purges = append(f.purges, p)
	return len(p.Paths) + len(p.Prefixes) + len(p.Tags), true, nil
}

// SiteStats answers fixed counters for a known site.
func (f *fakeSites) SiteStats(_ context.Context, id string) (rpcapi.SiteStats, error) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.sites[id]; !ok {
		return rpcapi.SiteStats{}, coffer.Errorf(coffer.ENOTFOUND, "site %q not found", id)
	}
	return rpcapi.SiteStats{Requests: 100, Bytes: 4096, Hits: 60, Misses: 20, Stale: 10, Revalidated: 10, Bypass: 0}, nil
}

// fakeAudit is an in-memory service.AuditLog: it records what it was asked and
// answers one record of the tenant asked.
type fakeAudit struct {
	mu      sync.Mutex
	tenants []string
	filters []audit.Filter
	calls   atomic.Int64
}

// QueryAudit records f and its tenant.
func (f *fakeAudit) QueryAudit(_ context.Context, flt audit.Filter) ([]audit.Record, error) {
	tenant := flt.Tenant
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tenants, f.filters = append(f.tenants, tenant), append(f.filters, flt)
	return []audit.Record{{Time: time.Date(2026, 11, 25, 6, 1, 2, 0, time.UTC), Tenant: tenant, Site: "www",
		Host: "www.example.com", Method: "GET", Path: "/assets/a.js", Target: "bucket:public", Status: 200,
		Bytes: 1234, Duration: 1.5, Cache: "HIT", Client: "127.0.0.1", UserID: "u1", RequestID: "r1"}}, nil
}

// siteEnv is the RPC face alone with SiteService and AuditService over fakes,
// served on 127.0.0.1; its credentials are newEnv's (adminSecret, HS256 JWTs).
type siteEnv struct {
	base  string
	sites *fakeSites
	audit *fakeAudit
}

// newSiteEnv starts the face; adjust changes its configuration first.
func newSiteEnv(t *testing.T, adjust func(*rpcapi.Config)) *siteEnv {
	authn, err := auth.New(auth.Config{AdminSecret: adminSecret, UnauthorizedRole: "public", JWTSecret: jwtConfig, JWTAdminRole: true})
	check(t, "auth.New", err)
	e := &siteEnv{sites: newFakeSites(), audit: &fakeAudit{}}
	cfg := rpcapi.DefaultConfig()
	cfg.Sites, cfg.Audit = e.sites, e.audit
	if adjust != nil {
		adjust(&cfg)
	}
	h, err := rpcapi.New(cfg, nil, nil, nil, authn, slog.New(slog.DiscardHandler))
	check(t, "rpcapi.New", err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	e.base = srv.URL
	return e
}

// siteClient is SiteService's client at base, sending hdr (key, value pairs).
func siteClient(base string, hdr ...string) adminv1connect.SiteServiceClient {
	return adminv1connect.NewSiteServiceClient(httpClient(hdr...), base)
}

// Secrets of the tests' sites: no answer may contain them.
const (
	siteS3Secret   = "site-s3-secret-access-key"
	siteHookSecret = "site-purge-hook-secret"
	siteHeader     = "Bearer site-origin-header-secret"
)

// fullSitePB is a site with every kind of target, secrets, and the output-only
// fields set (which the face must not pass on).
func fullSitePB(id string) *adminv1.Site {
	return &adminv1.Site{Id: id, Hosts: []string{id + ".example.com"}, NotFound: "/404.html",
		Routes: []*adminv1.Route{
			{Path: "/media/*", Target: &adminv1.Target{Kind: &adminv1.Target_Bucket{Bucket: &adminv1.BucketTarget{Id: "public"}}}},
			{Path: "/s3/*", Target: &adminv1.Target{Kind: &adminv1.Target_S3{S3: &adminv1.S3Origin{Bucket: "b",
				AccessKeyId: "AKID", SecretAccessKey: siteS3Secret, SecretAccessKeySet: true}}}},
			{Path: "/api/*", Target: &adminv1.Target{Kind: &adminv1.Target_Http{Http: &adminv1.HTTPOrigin{Url: "http://127.0.0.1:8080/",
				Headers: map[string]string{"Authorization": siteHeader}}}}},
		},
		PurgeWebhooks: []*adminv1.PurgeWebhook{{Url: "https://cdn.example/purge", Secret: siteHookSecret, SecretSet: true}},
		CreatedAt:     &timestamppb.Timestamp{Seconds: 1}, UpdatedAt: &timestamppb.Timestamp{Seconds: 2}}
}

// noSiteSecrets fails t if m, in JSON, holds a site's secret.
func noSiteSecrets(t *testing.T, what string, m proto.Message) {
	t.Helper()
	b, err := protojson.Marshal(m)
	check(t, what+": marshal", err)
	for _, s := range []string{siteS3Secret, siteHookSecret, siteHeader} {
		if strings.Contains(string(b), s) {
			t.Fatalf("%s answers a write-only secret: %s", what, b)
		}
	}
}

// checkSecretFlags fails t unless pb says fullSitePB's secrets are set (the HTTP
// origin's header by its name).
func checkSecretFlags(t *testing.T, what string, pb *adminv1.Site) {
	t.Helper()
	if !pb.GetRoutes()[1].GetTarget().GetS3().GetSecretAccessKeySet() || !pb.GetPurgeWebhooks()[0].GetSecretSet() ||
		!slices.Equal(pb.GetRoutes()[2].GetTarget().GetHttp().GetHeadersSet(), []string{"Authorization"}) {
		t.Errorf("%s does not say the secrets are set: %v", what, pb)
	}
	noSiteSecrets(t, what, pb)
}
