// Package payload is the JSON body of a webhook delivery: the event a subscriber
// receives. The outbox stores it when the change commits (the metadata stores call
// Encode in the changing transaction) and the dispatcher sends the stored bytes as
// they are, so this one format is both what receivers parse and what outbox rows
// hold: never rename, reorder or drop a field here. It is a leaf package (only the
// domain types) so that the stores can encode without importing the dispatcher.
package payload

import (
	"encoding/json"
	"time"

	"github.com/coffer/coffer"
)

// Event is a delivery's body. ID is unique per change: receivers de-duplicate on it,
// since delivery is at least once.
type Event struct {
	ID       string           `json:"id"`
	Type     coffer.EventType `json:"type"`
	Time     time.Time        `json:"time"`
	BucketID string           `json:"bucketId"`
	// File is the file after the change; for file.deleted, the file as it was.
	File *File `json:"file,omitempty"`
	// Before is the file before a replace or a metadata update.
	Before *File `json:"before,omitempty"`
	// Bucket is the bucket of a bucket event.
	Bucket *Bucket `json:"bucket,omitempty"`
	// Rejection is the refused upload of a file.rejected event.
	Rejection *Rejection `json:"rejection,omitempty"`
	Actor     Actor      `json:"actor"`
}

// Actor is who made the change: a role and user id, or role "system".
type Actor struct {
	Role   string `json:"role"`
	UserID string `json:"userId,omitempty"`
}

// Encode returns the JSON body of ev's deliveries.
func Encode(ev *coffer.Event) ([]byte, error) {
	return json.Marshal(fromEvent(ev))
}

// Decode parses a delivery's body (as a receiver written in Go would).
func Decode(b []byte) (*coffer.Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, err
	}
	return toEvent(&ev), nil
}

// fromEvent is the payload of ev.
func fromEvent(ev *coffer.Event) *Event {
	return &Event{ID: ev.ID, Type: ev.Type, Time: ev.Time, BucketID: ev.BucketID,
		File: fromFile(ev.File), Before: fromFile(ev.Before), Bucket: fromBucket(ev.Bucket),
		Rejection: fromRejection(ev.Rejection), Actor: Actor{Role: ev.Actor.Role, UserID: ev.Actor.UserID}}
}

// toEvent is the event ev carries.
func toEvent(ev *Event) *coffer.Event {
	return &coffer.Event{ID: ev.ID, Type: ev.Type, Time: ev.Time, BucketID: ev.BucketID,
		File: ev.File.toFile(), Before: ev.Before.toFile(), Bucket: ev.Bucket.toBucket(),
		Rejection: ev.Rejection.toRejection(), Actor: coffer.Actor{Role: ev.Actor.Role, UserID: ev.Actor.UserID}}
}
