package coffer

import (
	"context"
	"net/url"
	"strings"
	"time"
)

// EventType names a change that webhooks can subscribe to.
type EventType string

// Event types. They cross the wire (webhook payloads, subscriptions): never rename one.
const (
	FileCreated         EventType = "file.created"
	FileReplaced        EventType = "file.replaced"
	FileDeleted         EventType = "file.deleted"
	FileMetadataUpdated EventType = "file.metadata_updated"
	BucketCreated       EventType = "bucket.created"
	BucketDeleted       EventType = "bucket.deleted"
	// FileRejected: an upload or replace was refused because the virus scanner found
	// something; the event carries the Rejection and no file (nothing was stored).
	FileRejected EventType = "file.rejected"
)

// EventTypes lists every event type.
var EventTypes = []EventType{FileCreated, FileReplaced, FileDeleted, FileMetadataUpdated, BucketCreated, BucketDeleted, FileRejected}

// Valid reports whether t is a known event type.
func (t EventType) Valid() bool {
	for _, k := range EventTypes {
		if t == k {
			return true
		}
	}
	return false
}

// Event is one committed change, as webhook receivers get it (its JSON form, the body
// of a delivery, is webhook/payload's). ID is unique per change: receivers
// de-duplicate on it, since delivery is at least once.
type Event struct {
	ID       string
	Type     EventType
	Time     time.Time
	BucketID string
	// File is the file after the change; for file.deleted, the file as it was.
	File *File
	// Before is the file before a replace or a metadata update.
	Before *File
	// Bucket is the bucket of a bucket event.
	Bucket *Bucket
	// Rejection is the refused upload of a file.rejected event.
	Rejection *Rejection
	Actor     Actor
}

// Actor is who made a change: the role and user id of the request, or role "system"
// for coffer's own maintenance.
type Actor struct {
	Role   string
	UserID string
}

// SystemActor is the actor of changes coffer makes itself (e.g. deleting broken
// metadata without a principal).
var SystemActor = Actor{Role: "system"}

type actorKey struct{}

// WithActor returns ctx carrying the actor that events of changes made under ctx name.
func WithActor(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, actorKey{}, Actor{Role: p.Role, UserID: p.UserID})
}

// ActorFrom returns the actor set by WithActor, or SystemActor.
func ActorFrom(ctx context.Context) Actor {
	if a, ok := ctx.Value(actorKey{}).(Actor); ok {
		return a
	}
	return SystemActor
}

// Subscription sends the events of one bucket (or all, BucketID "") and of some types
// (or all, Events empty) to a URL, signed with Secret.
type Subscription struct {
	ID        string
	BucketID  string
	Events    []EventType
	URL       string
	Secret    string // shown only when created
	CreatedAt time.Time
}

// Matches reports whether s wants an event of type t in bucket.
func (s *Subscription) Matches(t EventType, bucket string) bool {
	if s.BucketID != "" && s.BucketID != bucket {
		return false
	}
	if len(s.Events) == 0 {
		return true
	}
	for _, e := range s.Events {
		if e == t {
			return true
		}
	}
	return false
}

// Validate checks the fields a client sets (the URL's target is checked by the
// webhook guard, which knows the network policy).
func (s *Subscription) Validate() error {
	if s.BucketID != "" {
		if err := ValidateBucketID(s.BucketID); err != nil {
			return err
		}
	}
	for _, e := range s.Events {
		if !e.Valid() {
			return Errorf(EINVALID, "events: unknown event type %q", e)
		}
	}
	if len(s.Secret) < 16 || len(s.Secret) > 256 {
		return Errorf(EINVALID, "secret must be 16 to 256 bytes")
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(s.URL) > 2048 {
		return Errorf(EINVALID, "url must be an absolute http or https URL of at most 2048 characters")
	}
	if strings.ContainsFunc(s.Secret, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return Errorf(EINVALID, "secret must be printable ASCII without spaces")
	}
	return nil
}

// Delivery states.
const (
	DeliveryPending   = "pending"   // waiting for its (next) attempt
	DeliveryDelivered = "delivered" // the receiver answered 2xx
	DeliveryDead      = "dead"      // every attempt failed; redeliver by hand
)

// Delivery is one event on its way to one subscription.
type Delivery struct {
	ID             int64
	SubscriptionID string
	EventID        string
	EventType      EventType
	State          string
	Attempts       int
	NextAttemptAt  time.Time
	LastStatus     int // HTTP status of the last attempt, 0 if none
	LastError      string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}
