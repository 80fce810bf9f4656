package app

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/tenancy"
)

// faces are the faces on the API port of every tenant, the default one included,
// in this order. hasura comes first: it also answers every path no face claims.
// A new face is a new package and one line here: a faceBuilder returning nil when
// it is off.
var faces = []faceBuilder{hasuraFace, rpcFace, consoleFace, indexFace}

// faceBuilder builds one face of graph g; nil: the face is off.
type faceBuilder func(s *Main, g *graph) (api.Face, error)

// HTTPOption adjusts the /v1 face's settings after Config's are applied (Parts.HTTP).
type HTTPOption func(*hasura.Config)

// faceConfig is the faces' settings, the same for every tenant's.
type faceConfig struct {
	hcfg        hasura.Config // the /v1 face's; the console and the sites' frames take its deadlines
	rcfg        rpcapi.Config
	rpcPrefixes []string // the management API face's, set by the default tenant's
}

// setFaceConfig sets the faces' settings from Config and Parts.HTTP, with m the
// server's metrics.
func (s *Main) setFaceConfig(m *metrics.Metrics) {
	c := s.cfg
	h := hasura.DefaultConfig()
	h.PublicURL, h.Version, h.AccessLog = c.PublicURL, c.Version, c.accessLog()
	h.Metrics, h.MetricsToken, h.MetricsElsewhere = m, c.MetricsToken, c.MetricsListen != ""
	if s.parts.HTTP != nil {
		s.parts.HTTP(&h)
	}
	r := rpcapi.DefaultConfig()
	r.Version, r.Metrics, r.AccessLog = c.Version, h.Metrics, h.AccessLog
	s.faceConfig = faceConfig{hcfg: h, rcfg: r}
}

// graphSpec is what one tenant's graph is built from: the differences between the
// default tenant's and the others' are data here, so that buildGraph and the faces
// list are the same for all.
type graphSpec struct {
	tenant           string // its id (coffer.DefaultTenantID for the default tenant)
	svc              *service.Service
	auth             auth.Config
	signer           *auth.Signer
	log              *slog.Logger
	publicURL        string // the base of its presigned URLs
	metricsElsewhere bool   // /metrics is not served on its hosts
	minWriteRate     int64  // bounds the faces' minimum write rate (a bandwidth cap); 0: theirs
	// The management API's: the platform's TenantService (the default tenant's hosts
	// only), this node's state, and whether it is built on its first request.
	tenants        rpcapi.TenantAdmin
	platformSecret string
	node           rpcapi.Node
	lazyRPC        bool
}

// graph is a graph as its faces are built, in the order of faces.
type graph struct {
	graphSpec
	authn *auth.Authenticator
	// presign is the /v1 face's presigned URL builder, which the RPC face lends.
	presign rpcapi.Presigner
}

// buildGraph builds a tenant's authenticator and faces over its service.
func (s *Main) buildGraph(spec graphSpec) (*tenancy.Graph, error) {
	authn, err := auth.New(spec.auth)
	if err != nil {
		return nil, err
	}
	g := &graph{graphSpec: spec, authn: authn}
	var built []api.Face
	for _, build := range faces {
		f, err := build(s, g)
		if err != nil {
			authn.Close()
			return nil, err
		}
		if f != nil {
			built = append(built, f)
		}
	}
	router, err := api.New(built[0], built[1:]...)
	if err != nil {
		authn.Close()
		return nil, err
	}
	return &tenancy.Graph{Service: spec.svc, Auth: authn, Faces: router}, nil
}

// hasuraFace builds the hasura-storage-compatible /v1 face.
func hasuraFace(s *Main, g *graph) (api.Face, error) {
	hcfg := s.hcfg
	hcfg.PublicURL, hcfg.MetricsElsewhere = g.publicURL, g.metricsElsewhere
	if g.minWriteRate > 0 {
		hcfg.MinWriteRate = min(hcfg.MinWriteRate, g.minWriteRate)
	}
	h, err := hasura.New(hcfg, g.svc, g.authn, g.signer, g.log)
	if err != nil {
		return nil, err
	}
	g.presign = h.PresignedURL
	return h, nil
}

// rpcFace builds the management API face (Connect, gRPC, gRPC-Web): the default
// tenant's at once, the others' on their first call: their handlers are about
// half of a tenant's graph's memory, and most tenants never call it.
func rpcFace(s *Main, g *graph) (api.Face, error) {
	rcfg := s.rcfg
	rcfg.Tenants, rcfg.PlatformSecret = g.tenants, g.platformSecret
	rcfg.Tenant, rcfg.TenantHost = g.tenant, g.tenant != coffer.DefaultTenantID
	if s.sites != nil {
		rcfg.Sites, rcfg.Audit = s.sites.Admin(g.tenant), s.sites
	}
	newRPC := func() (*rpcapi.Handler, error) { return rpcapi.New(rcfg, g.svc, g.node, g.presign, g.authn, g.log) }
	if g.lazyRPC {
		return &api.Lazy{Paths: s.rpcPrefixes, Refusal: rpcapi.Refusal, Build: func() (http.Handler, error) { return newRPC() },
			Unavailable: "this tenant's management API cannot be served right now"}, nil
	}
	h, err := newRPC()
	if err != nil {
		return nil, err
	}
	s.rpcPrefixes = h.Prefixes() // the lazy faces' (the default tenant's graph is built first)
	return h, nil
}

// indexFace builds the root page "/": browsers are sent to the console (when it
// is on), other clients get a JSON index of the faces.
func indexFace(s *Main, _ *graph) (api.Face, error) {
	info := api.IndexInfo{Version: s.cfg.Version, Console: s.consoleFrame != nil}
	for _, p := range s.rpcPrefixes {
		if name := strings.Trim(p, "/"); strings.Contains(name, ".") && !strings.Contains(name, "/") {
			info.RPC = append(info.RPC, name)
		}
	}
	return api.NewIndex(info), nil
}
