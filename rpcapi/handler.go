// Package rpcapi is coffer's management face: the coffer.admin.v1 contract (proto/)
// served with connect-go on the API port, beside the hasura face. One handler
// answers the Connect protocol (JSON or binary over HTTP/1.1 and HTTP/2, so curl
// works), gRPC (HTTP/2: h2c with --h2c) and gRPC-Web, plus gRPC server reflection
// (v1 and v1alpha, for grpcurl and Postman: reflection.go) and the standard
// grpc.health.v1 service.
//
// Credentials are the /v1 API's, read by the same auth.Authenticator.Principal; the
// service checks what each principal may do. TenantService (multi-tenancy's
// management, over Config.Tenants) alone takes another credential, the platform
// admin's secret (platform.go), and refuses every tenant's; SiteService (over
// Config.Sites) is the face's tenant's admin's, and AuditService (over Config.Audit)
// its admin's or the platform admin's (audit.go). A call is admitted before its
// request is read (gate): anonymous callers reach reflection, health, GetVersion
// and FileService only. What one stream, one caller on one connection, and the
// anonymous callers of one address may have the face decode is bounded (budget.go:
// gzip bombs over h2c). Errors are coffer.Error kinds mapped to Connect codes by one table
// (CodeOf); an EINVALID error that names its field carries a google.rpc.BadRequest
// detail. The face holds no business logic: each method converts the request to
// domain values (convert.go), calls one service method and converts the result
// back.
package rpcapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/metrics"
	"github.com/coffer/coffer/proto/gen/coffer/admin/v1/adminv1connect"
	"github.com/coffer/coffer/proto/gen/grpc/reflection/v1/reflectionv1connect"
	"github.com/coffer/coffer/service"
)

// Config holds the face's settings.
type Config struct {
	Version string // answered by ServerService.GetVersion
	// ReadMaxBytes bounds a request message (after decompression): larger ones are
	// refused with RESOURCE_EXHAUSTED before they are decoded.
	ReadMaxBytes int
	// Timeout bounds a stall in reading a request body and the writing of a response.
	Timeout time.Duration
	// Metrics, when set, records every call (route: the service's path prefix).
	Metrics   *metrics.Metrics
	AccessLog httpserve.AccessLogConfig
	// Tenants, when set, serves TenantService to the platform admin; nil: a server
	// without multi-tenancy, whose TenantService refuses every call
	// (FAILED_PRECONDITION, saying so).
	Tenants TenantAdmin
	// PlatformSecret is the platform admin's credential, the only one TenantService
	// accepts (header x-coffer-platform-secret), distinct from every tenant's admin
	// secret. Required with Tenants.
	PlatformSecret string
	// TenantHost marks the face of one tenant's hosts on a multi-tenant server
	// (Tenants nil): TenantService is the platform's, and refuses every call there
	// with PERMISSION_DENIED rather than saying multi-tenancy is off.
	TenantHost bool
	// Tenant is the id of the tenant whose hosts this face serves ("" for the
	// default tenant's, the platform's hosts): the tenant whose audit records its
	// admin may read.
	Tenant string
	// Sites, when set, serves SiteService to the admin of the face's tenant; nil:
	// every call is refused (FAILED_PRECONDITION).
	Sites SiteAdmin
	// Audit, when set, is the audit log AuditService reads (through the use case
	// service.Audit); nil: every call is refused (FAILED_PRECONDITION).
	Audit service.AuditLog
	// Budget bounds what a stream and a connection may have the face decode
	// (budget.go); past it, RESOURCE_EXHAUSTED.
	Budget Budget
}

// DefaultConfig returns the defaults: 2 MiB messages (a rules document may be 1 MiB,
// and a JSON string escapes it to at most twice that), one minute per call.
func DefaultConfig() Config {
	return Config{Version: "dev", ReadMaxBytes: 2 << 20, Timeout: time.Minute, AccessLog: httpserve.DefaultAccessLogConfig(),
		Budget: DefaultBudget()}
}

// Validate checks c.
func (c Config) Validate() error {
	if c.ReadMaxBytes < 1 || c.Timeout <= 0 {
		return coffer.Errorf(coffer.EINVALID, "rpc: the message limit and the timeout must be positive")
	}
	if c.Tenants != nil && c.TenantHost {
		return coffer.Errorf(coffer.EINVALID, "rpc: a tenant's face does not manage tenants")
	}
	if c.Tenants != nil && c.PlatformSecret == "" {
		return coffer.Errorf(coffer.EINVALID, "rpc: managing tenants needs a platform secret")
	}
	if err := c.Budget.Validate(); err != nil {
		return err
	}
	return c.AccessLog.Validate()
}

// Handler is the RPC face: an http.Handler with the Prefixes api.Router composes.
type Handler struct {
	cfg      Config
	svc      Service
	node     Node
	presign  Presigner
	authn    *auth.Authenticator
	log      *slog.Logger
	routes   httpserve.RouteMux
	frame    *httpserve.Frame // serves every call: request ids, logs, metrics, deadlines
	prefixes []string
	platform [32]byte // SHA-256 of Config.PlatformSecret
}

// compressMinBytes is the smallest response compressed (gzip, when the client
// accepts it): below it, compressing costs more CPU than the bytes it saves on the
// wire (connect-go's default compresses every response).
const compressMinBytes = 1 << 10

// smallMessage bounds a reflection or health request (a host, a symbol or service
// name: a few hundred bytes), after decompression.
const smallMessage = 16 << 10

// services are the contract's services, for reflection and health.
var services = []string{
	adminv1connect.BucketServiceName, adminv1connect.FileServiceName, adminv1connect.RuleServiceName,
	adminv1connect.WebhookServiceName, adminv1connect.OpsServiceName, adminv1connect.ServerServiceName,
	adminv1connect.TenantServiceName, adminv1connect.SiteServiceName, adminv1connect.AuditServiceName,
}

// New returns the face over svc; node reports the server's own state and presign
// makes presigned URLs.
func New(cfg Config, svc Service, node Node, presign Presigner, authn *auth.Authenticator, log *slog.Logger) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, svc: svc, node: node, presign: presign, authn: authn, log: log,
		routes: httpserve.RouteMux{ServeMux: http.NewServeMux()}, platform: sha256.Sum256([]byte(cfg.PlatformSecret))}
	// The gate admits a call before any of its messages is read; the budget's
	// interceptor counts what was decoded.
	opts := connect.WithHandlerOptions(connect.WithRequestGate(h.gate),
		connect.WithInterceptors(budgetInterceptor{cfg.Budget}),
		connect.WithReadMaxBytes(cfg.ReadMaxBytes), connect.WithCompressMinBytes(compressMinBytes),
		stampedCodecs(), gzipCompression(cfg.ReadMaxBytes), connect.WithRecover(h.recovered))
	// Reflection, health and ServerService (open to anonymous callers, but for its
	// admin's methods) take a name or two, or nothing: a message of theirs may not
	// decode past smallMessage.
	small := connect.WithHandlerOptions(opts, connect.WithReadMaxBytes(smallMessage), gzipCompression(smallMessage))
	srv := &server{h: h}
	h.handle(adminv1connect.NewBucketServiceHandler(srv, opts))
	h.handle(adminv1connect.NewFileServiceHandler(srv, opts))
	h.handle(adminv1connect.NewRuleServiceHandler(srv, opts))
	h.handle(adminv1connect.NewWebhookServiceHandler(srv, opts))
	h.handle(adminv1connect.NewOpsServiceHandler(srv, opts))
	h.handle(adminv1connect.NewServerServiceHandler(srv, small))
	h.handle(adminv1connect.NewTenantServiceHandler(srv, opts))
	h.handle(adminv1connect.NewSiteServiceHandler(srv, opts))
	h.handle(adminv1connect.NewAuditServiceHandler(srv, opts))
	h.handleReflection(small)
	h.handle(grpchealth.NewHandler(health{svc}, small))
	h.frame = &httpserve.Frame{Routes: h.routes, Encode: encodeError, IDs: httpserve.NewIDs(), Log: log,
		Access: httpserve.NewAccessLog(cfg.AccessLog, log), ReadIdleTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout}
	if cfg.Metrics != nil {
		h.frame.Begin = cfg.Metrics.Begin
	}
	return h, nil
}

// handle routes the paths under prefix to hd, authenticated.
func (h *Handler) handle(prefix string, hd http.Handler) {
	h.routes.HandleFunc(prefix, func(w http.ResponseWriter, r *http.Request) { h.authenticated(w, r, hd) })
	h.prefixes = append(h.prefixes, prefix)
}

// Prefixes are the paths of the face's services ("/coffer.admin.v1.BucketService/"...).
func (h *Handler) Prefixes() []string { return h.prefixes }

// authKey is the context key of a request's authentication.
type authKey struct{}

// authResult is who makes a request, or why that could not be known.
type authResult struct {
	p   *coffer.Principal
	err error
}

// ServeHTTP serves r in the face's httpserve.Frame.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.frame.ServeHTTP(w, r) }

// authenticated finds who makes r (as the hasura face does:
// auth.Authenticator.Principal) and serves it with hd, its body bounded (limits.go)
// and what it decodes counted (budget.go); the interceptor answers a failed
// authentication in the protocol of the call.
func (h *Handler) authenticated(w http.ResponseWriter, r *http.Request, hd http.Handler) {
	limitBody(w, r, h.cfg.ReadMaxBytes)
	p, err := h.authn.Principal(r)
	if st := httpserve.StateOf(r); st != nil {
		st.Principal = p
	}
	r, settle := h.cfg.Budget.tallied(r.WithContext(context.WithValue(r.Context(), authKey{}, authResult{p, err})),
		h.caller(r.Header, p), h.cfg.ReadMaxBytes)
	hd.ServeHTTP(w, r)
	settle()
}

// principal returns who makes the call in ctx.
func principal(ctx context.Context) *coffer.Principal {
	a, _ := ctx.Value(authKey{}).(authResult)
	return a.p
}

// caller is who a request with header hdr and principal p is on its connection,
// for the budget: its tenant's principal (role and user id), the platform admin, or
// "" for anonymous callers (and failed credentials, which the gate refuses).
func (h *Handler) caller(hdr http.Header, p *coffer.Principal) string {
	switch {
	case h.cfg.Tenants != nil && h.platformSecret(hdr):
		return "\x00platform"
	case p == nil || p.Anonymous:
		return ""
	}
	return h.cfg.Tenant + "\x00" + p.Role + "\x00" + p.UserID
}

// gate admits a call, or refuses it before any of its messages is read
// (connect.WithRequestGate): failed credentials; TenantService, or AuditService
// with a platform secret, without the right one (platformCheck); an anonymous call of a method that needs
// credentials (public); a caller over its budget.
func (h *Handler) gate(ctx context.Context, spec connect.Spec, _ connect.Peer, hdr http.Header) (context.Context, error) {
	err := h.admit(ctx, spec.Procedure, hdr)
	if err == nil {
		err = callerOf(ctx).add(h.cfg.Budget, 0, 0)
	}
	if err != nil {
		markCounted(ctx) // nothing of it was decoded
		return nil, err
	}
	return ctx, nil
}

// admit returns the refusal of a call of procedure by ctx's caller, nil if it may
// be read.
func (h *Handler) admit(ctx context.Context, procedure string, hdr http.Header) error {
	a, ok := ctx.Value(authKey{}).(authResult)
	switch {
	case !ok:
		return h.toConnect(ctx, coffer.Errorf(coffer.EINTERNAL, "request not authenticated"))
	case a.err != nil:
		return h.toConnect(ctx, a.err)
	case strings.HasPrefix(procedure, "/"+adminv1connect.TenantServiceName+"/") ||
		strings.HasPrefix(procedure, "/"+adminv1connect.AuditServiceName+"/") && len(hdr.Values(HeaderPlatformSecret)) > 0:
		if err := h.platformCheck(ctx, hdr); err != nil {
			return h.toConnect(ctx, err)
		}
	case (a.p == nil || a.p.Anonymous) && !public(procedure):
		return h.toConnect(ctx, coffer.Errorf(coffer.EUNAUTHORIZED,
			"this method needs credentials: the admin secret (x-hasura-admin-secret) or a JWT (Authorization: Bearer)"))
	}
	return nil
}

// public reports whether anonymous callers may call procedure: reflection and
// health (grpcurl lists and describes without a credential), GetVersion (as
// /v1/version), and FileService, whose methods the anonymous role's rules govern
// (a public bucket's files are listed and read as over /v1). Every other method
// needs credentials.
func public(procedure string) bool {
	svc, _, _ := strings.Cut(strings.TrimPrefix(procedure, "/"), "/")
	switch svc {
	case reflectionv1connect.ServerReflectionName, reflectionV1Alpha, grpchealth.HealthV1ServiceName, adminv1connect.FileServiceName:
		return true
	}
	return procedure == adminv1connect.ServerServiceGetVersionProcedure
}

// recovered answers a method's panic as an internal error, logged once.
func (h *Handler) recovered(_ context.Context, spec connect.Spec, _ http.Header, v any) error {
	h.log.Error("rpc: panic", "procedure", spec.Procedure, "panic", v)
	return connect.NewError(connect.CodeInternal, errors.New("internal error"))
}

// health answers grpc.health.v1 checks: serving while the metadata store answers.
type health struct{ svc Service }

// Check reports the server (service "") or one of the contract's services.
func (hc health) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	known := req.Service == "" || req.Service == grpchealth.HealthV1ServiceName
	for _, s := range services {
		known = known || req.Service == s
	}
	if !known {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("unknown service "+req.Service))
	}
	if err := hc.svc.Ping(ctx); err != nil {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

// server implements the contract's nine service handlers over the face's services.
type server struct{ h *Handler }

var (
	_ adminv1connect.BucketServiceHandler  = (*server)(nil)
	_ adminv1connect.FileServiceHandler    = (*server)(nil)
	_ adminv1connect.RuleServiceHandler    = (*server)(nil)
	_ adminv1connect.WebhookServiceHandler = (*server)(nil)
	_ adminv1connect.OpsServiceHandler     = (*server)(nil)
	_ adminv1connect.ServerServiceHandler  = (*server)(nil)
	_ adminv1connect.TenantServiceHandler  = (*server)(nil)
	_ adminv1connect.SiteServiceHandler    = (*server)(nil)
	_ adminv1connect.AuditServiceHandler   = (*server)(nil)
)
