// Package app wires coffer's object graph once: the metadata and blob stores, the
// caches over them, the service, the image engine, webhooks, virus scanning,
// authentication and the HTTP server. cmd/coffer turns flags and environment into a
// Config and runs a Main; tests start the same Main on 127.0.0.1, so they exercise
// the wiring that runs in production.
//
// Every tenant's graph, the default tenant's included, is built by the same two
// functions: newService (its service over its views of the stores and caches) and
// buildGraph (its authenticator and faces), from specs holding what differs as data.
// The faces are listed once, in faces.go, the only file that knows the hasura face:
// a new face is a new package and one line there. The tenancy runtime (package
// tenancy) routes each request to its tenant's graph with --tenants.
//
// Lifecycle: New opens and builds everything (a missing optional capability of a
// store is a start-up error, never a panic), Listen binds the ports, Run serves until
// its context ends and drains in-flight requests, Close stops the background work and
// closes the stores.
package app
