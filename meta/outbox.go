package meta

import (
	"context"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Outbox is the transactional outbox of webhook events, kept in the same database as
// the metadata. A store implementing it writes an event in the same transaction as each
// change its Store methods make, so an event exists exactly when its change committed:
//
//	CreateFiles   file.created, one per file
//	CommitUpload  file.replaced (file.created if the row was not uploaded yet)
//	UpdateFile    file.metadata_updated
//	DeleteFile    file.deleted
//	CreateBucket  bucket.created
//	DeleteBucket  bucket.deleted
//
// AbortUpload, BeginUpload and UpdateBucket write none. The actor is taken from the
// context (coffer.WithActor). An event is stored only if some subscription matches it
// when its change commits, with one pending delivery per matching subscription.
type Outbox interface {
	// CreateSubscription stores s (ID and Secret set by the caller), setting CreatedAt.
	// ECONFLICT if the id exists.
	CreateSubscription(ctx context.Context, s *coffer.Subscription) error
	// GetSubscription returns ENOTFOUND if there is no such subscription. Secret is "".
	GetSubscription(ctx context.Context, id string) (*coffer.Subscription, error)
	// ListSubscriptions returns every subscription ordered by creation. Secrets are "".
	ListSubscriptions(ctx context.Context) ([]*coffer.Subscription, error)
	// DeleteSubscription removes a subscription and its deliveries. ENOTFOUND if missing.
	DeleteSubscription(ctx context.Context, id string) error

	// ListDeliveries returns deliveries of q.SubscriptionID, newest first.
	ListDeliveries(ctx context.Context, q DeliveryQuery) ([]*coffer.Delivery, error)
	// Redeliver makes delivery id of subscription subID pending again with a fresh
	// attempt budget, due at now. ENOTFOUND if there is no such delivery, EINUSE
	// while an attempt of it is running (its lease has not ended).
	Redeliver(ctx context.Context, subID string, id int64, now time.Time) error

	// ClaimDeliveries takes up to limit pending deliveries due at now, oldest first,
	// counts an attempt on each and leases them until leaseUntil: a claim that is not
	// finished by then (its node died) is due again. Concurrent claimers, on any node,
	// never get the same delivery while its lease runs.
	ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int) ([]*Claim, error)
	// FinishDelivery records the outcome of claim c's attempt. It changes nothing (and
	// returns nil) if the delivery was claimed again meanwhile (c.Token is stale) or is
	// gone.
	FinishDelivery(ctx context.Context, c *Claim, o Outcome) error
	// ReleaseClaims makes every leased delivery due at now, for a single node starting
	// up: no claim can be running, so waiting for leases to end would only delay
	// deliveries cut off by a crash. It returns how many it released.
	ReleaseClaims(ctx context.Context, now time.Time) (int, error)
	// Prune removes delivered and dead deliveries last updated before olderThan, and
	// events no delivery refers to. It returns how many deliveries it removed.
	Prune(ctx context.Context, olderThan time.Time) (int, error)

	// OnEvent sets fn to be called after a transaction that stored an event commits
	// (to wake a dispatcher on this node). Call it before the store is used.
	OnEvent(fn func())
}

// DeliveryQuery selects deliveries of one subscription.
type DeliveryQuery struct {
	SubscriptionID string
	State          string // "" for any
	Limit          int    // 1..1000, clamped
}

// Claim is one leased delivery with what sending it needs.
type Claim struct {
	Delivery coffer.Delivery // State, Attempts (counting this one), NextAttemptAt (lease end)
	URL      string
	Secret   string
	Payload  []byte // the event's JSON (webhook/payload), sent as the request body
	// Token identifies this claim: its outcome is recorded only while no later claim
	// (after the lease ended, or a redelivery) has replaced it.
	Token int64
}

// Outcome is the result of one delivery attempt.
type Outcome struct {
	At     time.Time
	State  string    // coffer.DeliveryDelivered, DeliveryPending (retry at NextAt) or DeliveryDead
	NextAt time.Time // when State is pending
	Status int       // the receiver's HTTP status, 0 if none
	Error  string    // "" on success
}

// FileEvent returns the event of a file change, with a new id, the actor from ctx and
// time now.
func FileEvent(ctx context.Context, t coffer.EventType, before, after *coffer.File, now time.Time) *coffer.Event {
	ev := &coffer.Event{ID: coffer.NewFileID(), Type: t, Time: now, Actor: coffer.ActorFrom(ctx), Before: before, File: after}
	if t == coffer.FileDeleted || t == coffer.FileCreated {
		ev.Before = nil
		if after == nil {
			ev.File = before
		}
	}
	ev.BucketID = ev.File.BucketID
	return ev
}

// ReplaceEvent is the event of CommitUpload: file.replaced, or file.created if before
// was not uploaded yet.
func ReplaceEvent(ctx context.Context, before, after *coffer.File, now time.Time) *coffer.Event {
	if !before.IsUploaded {
		return FileEvent(ctx, coffer.FileCreated, nil, after, now)
	}
	return FileEvent(ctx, coffer.FileReplaced, before, after, now)
}

// BucketEvent returns the event of a bucket change.
func BucketEvent(ctx context.Context, t coffer.EventType, b *coffer.Bucket, now time.Time) *coffer.Event {
	return &coffer.Event{ID: coffer.NewFileID(), Type: t, Time: now, Actor: coffer.ActorFrom(ctx), BucketID: b.ID, Bucket: b}
}

// EventTypesColumn encodes a subscription's event types for storage: "" for all, else
// ",a,b," so that a substring test for ",type," matches.
func EventTypesColumn(ts []coffer.EventType) string {
	if len(ts) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteByte(',')
	for _, t := range ts {
		b.WriteString(string(t))
		b.WriteByte(',')
	}
	return b.String()
}

// ParseEventTypesColumn is the inverse of EventTypesColumn.
func ParseEventTypesColumn(s string) []coffer.EventType {
	out := []coffer.EventType{}
	for _, p := range strings.Split(strings.Trim(s, ","), ",") {
		if p != "" {
			out = append(out, coffer.EventType(p))
		}
	}
	return out
}

// EventTypeNeedle is what EventTypesColumn values are searched for to match t.
func EventTypeNeedle(t coffer.EventType) string { return "," + string(t) + "," }

// DeliveryLimit clamps a delivery listing's limit to 1..1000 (default 100).
func DeliveryLimit(n int) int {
	switch {
	case n <= 0:
		return 100
	case n > 1000:
		return 1000
	}
	return n
}

// ErrDeliveryNotFound is the error of a delivery that does not exist.
func ErrDeliveryNotFound(subID string, id int64) error {
	return coffer.Errorf(coffer.ENOTFOUND, "delivery %d of subscription %s not found", id, subID)
}

// ErrDeliveryInFlight is the error of redelivering a delivery while it is attempted.
func ErrDeliveryInFlight(id int64) error {
	return coffer.Errorf(coffer.EINUSE, "delivery %d is being attempted now; redeliver it when the attempt has ended", id)
}
