// Package bus carries cluster messages between the nodes that share one metadata
// store: typed events saying what changed (a file row, a bucket, a tenant's rules,
// registry row or sites, a site purge), so that every node drops or reloads what it
// holds of it. It owns the events, their wire format (Encode, Decode) and the two
// halves every backend implements (Publisher, Listener); bus/postgres is the
// PostgreSQL backend (NOTIFY and LISTEN on one channel).
//
// The wire format is older than this package and stays byte for byte what nodes of
// earlier versions send and read, and what the metadata store's own triggers send
// (meta/postgres/migrations: files, buckets, rules, the tenant registry and sites
// notify on every committed change).
package bus

import (
	"context"
	"strconv"
)

// Kind is what an event says changed.
type Kind uint8

// The kinds, with their wire form ("<t>" is the tenant, empty for the default one).
const (
	// Everything may have changed: drop every cached entry ("*"). A listener
	// delivers it after every (re)connect, events sent meanwhile being lost, and
	// for a message it cannot decode.
	Everything Kind = iota + 1
	// FileChanged: the file row ID ("f:<id>", "f:<t>/<id>").
	FileChanged
	// BucketChanged: the bucket ID ("b:<id>", "b:<t>/<id>").
	BucketChanged
	// RulesChanged: the tenant's permission rules ("r", "r:<t>").
	RulesChanged
	// TenantChanged: the tenant's registry row or one of its hosts ("t:<t>"; never
	// the default tenant, which has no row).
	TenantChanged
	// TenantGone: the tenant was deleted; every entry of it goes ("g:<t>"; never
	// the default tenant, which cannot be deleted).
	TenantGone
	// SitesChanged: the tenant's sites ("s:", "s:<t>").
	SitesChanged
	// SitePurged: a purge of the tenant's site ID, Purge saying what
	// (`p:{"t":"<t>","s":"<id>","p":{"paths":[...],...}}`).
	SitePurged
)

var kindNames = [...]string{Everything: "Everything", FileChanged: "FileChanged", BucketChanged: "BucketChanged",
	RulesChanged: "RulesChanged", TenantChanged: "TenantChanged", TenantGone: "TenantGone", SitesChanged: "SitesChanged",
	SitePurged: "SitePurged"}

// String returns k's name ("Kind(9)" for an unknown kind).
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one cluster message.
type Event struct {
	Kind   Kind
	Tenant string // the tenant it concerns: "" for the default tenant (and for Everything)
	ID     string // FileChanged: the file id; BucketChanged: the bucket id; SitePurged: the site id
	Purge  Purge  // SitePurged: what to purge; empty purges the whole site
}

// Purge is what a SitePurged event purges: the paths, the path prefixes and the tags
// named (the same fields as site.Purge, which converts to it).
type Purge struct {
	Paths    []string `json:"paths,omitempty"`
	Prefixes []string `json:"prefixes,omitempty"`
	Tags     []string `json:"tags,omitempty"`
}

// MaxPayload is the longest encoded event every backend carries (PostgreSQL refuses
// a NOTIFY payload of 8,000 bytes or more; this leaves room below it).
const MaxPayload = 7900

// Handler receives a listener's events, one at a time, in the order they arrive.
type Handler func(Event)

// Publisher sends events to every node's listener, this node's included.
type Publisher interface {
	// Publish sends e. EINVALID for an event Encode refuses or whose encoding is
	// longer than MaxPayload bytes (nothing is sent).
	Publish(ctx context.Context, e Event) error
}

// Listener delivers every node's events (and the store's own) to a handler.
type Listener interface {
	// Run delivers events to h until ctx is done, reconnecting when it loses its
	// connection; after every (re)connect it delivers Everything first.
	Run(ctx context.Context, h Handler)
}
