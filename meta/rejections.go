package meta

import (
	"context"

	"github.com/coffer/coffer"
)

// Rejections is the record of uploads refused by the virus scanner, kept in the
// metadata database. RecordRejection writes the record and its file.rejected event
// (see Outbox) in one transaction.
type Rejections interface {
	// RecordRejection stores r, setting r.Time to now, and a file.rejected event
	// whose actor is r's role and user id. r.ID is set by the caller; ECONFLICT if it
	// exists.
	RecordRejection(ctx context.Context, r *coffer.Rejection) error
	// ListRejections returns the newest rejections first (by time, then id), at most
	// limit (clamped to 1..1000; 0 means 100).
	ListRejections(ctx context.Context, limit int) ([]*coffer.Rejection, error)
}

// RejectionEvent returns the file.rejected event of r.
func RejectionEvent(r *coffer.Rejection) *coffer.Event {
	return &coffer.Event{ID: coffer.NewFileID(), Type: coffer.FileRejected, Time: r.Time, BucketID: r.BucketID,
		Rejection: r, Actor: coffer.Actor{Role: r.Role, UserID: r.UserID}}
}

// RejectionLimit clamps a rejection listing's limit like DeliveryLimit.
func RejectionLimit(n int) int { return DeliveryLimit(n) }
