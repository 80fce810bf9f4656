package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// Presign's lifetime: the bucket's download expiration, or less when asked; more
// is capped at it; a negative or sub-second request is EINVALID.
func TestPresignLifetime(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	exp := int64(60)
	_, err := svc.UpdateBucket(ctx, admin, "default", coffer.BucketUpdate{DownloadExpiration: &exp})
	must(t, err)
	f := named(t, svc, admin, "a.txt")
	for _, tt := range []struct {
		want, got time.Duration
		code      string
	}{
		{0, time.Minute, ""},
		{time.Second, time.Second, ""},
		{59 * time.Second, 59 * time.Second, ""},
		{time.Minute, time.Minute, ""},
		{time.Hour, time.Minute, ""}, // capped
		{-time.Second, 0, coffer.EINVALID},
		{1500 * time.Millisecond, 0, coffer.EINVALID},
	} {
		_, ttl, err := svc.Presign(ctx, admin, f.ID, tt.want)
		if coffer.ErrorCode(err) != tt.code || ttl != tt.got {
			t.Errorf("Presign(%v) = %v, %v; want %v, code %q", tt.want, ttl, err, tt.got, tt.code)
		}
	}
}
