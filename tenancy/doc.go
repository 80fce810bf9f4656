// Package tenancy is the runtime of a multi-tenant coffer (--tenants): it resolves
// each request's tenant from its host (or a /t/{tenant}/ path prefix), refuses what
// it must (an unknown host, a suspended tenant, a request over its tenant's rate
// limit, after refusalDelay), paces the responses of a tenant with a bandwidth
// limit, counts what each tenant was served, holds a bounded, least recently used
// cache of tenants' object graphs, sweeps them, and purges the data of deleted
// tenants in batches.
//
// It knows no face. A tenant's graph is built by the wiring (app) through
// Deps.Build, and its faces are anything with ServeHTTP, ServeFast and RefuseAt
// (Faces): a refusal is written by the face of the request's path, in its own
// protocol (hasura JSON on /v1, a Connect or gRPC status on the RPC face). What the
// runtime must tell the rest of the node (a deleted tenant's caches, a site's
// hosts) it tells through the callbacks in Deps.
package tenancy
