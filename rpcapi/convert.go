package rpcapi

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// The explicit conversions between domain values (no wire tags) and the contract's
// messages. They parse nothing: validation is the service's.

// ts converts a time, leaving the zero time unset.
func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// bucketPB converts a bucket.
func bucketPB(b *coffer.Bucket) *adminv1.Bucket {
	return &adminv1.Bucket{Id: b.ID, MinUploadFileSize: b.MinUploadFileSize, MaxUploadFileSize: b.MaxUploadFileSize,
		AllowedMimeTypes: b.AllowedMimeTypes, CacheControl: b.CacheControl, DownloadExpiration: b.DownloadExpiration,
		PresignedUrlsEnabled: b.PresignedURLsEnabled, Public: b.Public, AllowInline: b.AllowInline,
		CacheControlShared: b.CacheControlShared, CreatedAt: ts(b.CreatedAt), UpdatedAt: ts(b.UpdatedAt)}
}

// bucketUpdate converts the settings to change (nil: none).
func bucketUpdate(s *adminv1.BucketSettings) coffer.BucketUpdate {
	if s == nil {
		return coffer.BucketUpdate{}
	}
	u := coffer.BucketUpdate{MinUploadFileSize: s.MinUploadFileSize, MaxUploadFileSize: s.MaxUploadFileSize,
		CacheControl: s.CacheControl, DownloadExpiration: s.DownloadExpiration,
		PresignedURLsEnabled: s.PresignedUrlsEnabled, Public: s.Public, AllowInline: s.AllowInline,
		CacheControlShared: s.CacheControlShared}
	if s.AllowedMimeTypes != nil {
		types := append([]string{}, s.AllowedMimeTypes.GetTypes()...)
		u.AllowedMimeTypes = &types
	}
	return u
}

// filePB converts a file's metadata (not its blob key: that is the server's own).
func filePB(f *coffer.File) *adminv1.File {
	md := string(f.Metadata)
	if md == "" {
		md = "{}"
	}
	return &adminv1.File{Id: f.ID, BucketId: f.BucketID, Name: f.Name, Size: f.Size, MimeType: f.MimeType,
		Etag: f.ETag, IsUploaded: f.IsUploaded, UploadedByUserId: f.UploadedByUserID, MetadataJson: md,
		CreatedAt: ts(f.CreatedAt), UpdatedAt: ts(f.UpdatedAt)}
}

// filesPB converts files.
func filesPB(fs []*coffer.File) []*adminv1.File {
	out := make([]*adminv1.File, len(fs))
	for i, f := range fs {
		out[i] = filePB(f)
	}
	return out
}

// metadataArg converts an optional metadata JSON string: nil when unset.
func metadataArg(s *string) json.RawMessage {
	if s == nil {
		return nil
	}
	return json.RawMessage(*s)
}

// webhookPB converts a subscription (with its secret only if it has one: when made).
func webhookPB(s *coffer.Subscription) *adminv1.Webhook {
	events := make([]string, len(s.Events))
	for i, e := range s.Events {
		events[i] = string(e)
	}
	return &adminv1.Webhook{Id: s.ID, BucketId: s.BucketID, Events: events, Url: s.URL, Secret: s.Secret,
		CreatedAt: ts(s.CreatedAt)}
}

// subscription converts a CreateWebhook request.
func subscription(r *adminv1.CreateWebhookRequest) coffer.Subscription {
	var events []coffer.EventType
	for _, e := range r.GetEvents() {
		events = append(events, coffer.EventType(e))
	}
	return coffer.Subscription{URL: r.GetUrl(), BucketID: r.GetBucketId(), Events: events, Secret: r.GetSecret()}
}

// deliveryStates pairs the contract's delivery states with the domain's.
var deliveryStates = map[adminv1.DeliveryState]string{
	adminv1.DeliveryState_DELIVERY_STATE_UNSPECIFIED: "",
	adminv1.DeliveryState_DELIVERY_STATE_PENDING:     coffer.DeliveryPending,
	adminv1.DeliveryState_DELIVERY_STATE_DELIVERED:   coffer.DeliveryDelivered,
	adminv1.DeliveryState_DELIVERY_STATE_DEAD:        coffer.DeliveryDead,
}

// deliveryState converts a state filter; an unknown enum value is EINVALID.
func deliveryState(s adminv1.DeliveryState) (string, error) {
	st, ok := deliveryStates[s]
	if !ok {
		return "", coffer.InvalidField("state", "state must be pending, delivered or dead")
	}
	return st, nil
}

// deliveryStatePB converts a domain state (unknown: unspecified).
func deliveryStatePB(s string) adminv1.DeliveryState {
	for k, v := range deliveryStates {
		if v == s && v != "" {
			return k
		}
	}
	return adminv1.DeliveryState_DELIVERY_STATE_UNSPECIFIED
}

// deliveryPB converts a delivery.
func deliveryPB(d *coffer.Delivery) *adminv1.Delivery {
	return &adminv1.Delivery{Id: d.ID, WebhookId: d.SubscriptionID, EventId: d.EventID, EventType: string(d.EventType),
		State: deliveryStatePB(d.State), Attempts: int32(d.Attempts), NextAttemptAt: ts(d.NextAttemptAt),
		LastStatus: int32(d.LastStatus), LastError: d.LastError, CreatedAt: ts(d.CreatedAt), UpdatedAt: ts(d.UpdatedAt)}
}

// rejectionPB converts a virus scanner rejection.
func rejectionPB(r *coffer.Rejection) *adminv1.VirusRejection {
	return &adminv1.VirusRejection{Id: r.ID, Time: ts(r.Time), BucketId: r.BucketID, Name: r.Name, FileId: r.FileID,
		UploadedByUserId: r.UserID, Role: r.Role, Signature: r.Signature, Size: r.Size}
}

// limitArg converts a page size or limit: 0 is the default (100), and the service
// checks the range of the others.
func limitArg(n int32) int {
	if n == 0 {
		return 100
	}
	return int(n)
}
