package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// TestPlainJSON: --output json prints /v1's conventions, not protojson's: 64-bit
// integers as numbers, camelCase names in the .proto's order, RFC 3339 times, every
// plain field present, two-space indentation, '&' unescaped, and the same bytes on
// every run.
func TestPlainJSON(t *testing.T) {
	at := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	b := &adminv1.Bucket{Id: "photos", MaxUploadFileSize: 10_000_000, AllowedMimeTypes: []string{"image/*"},
		CacheControl: "max-age=60", DownloadExpiration: 30, Public: true, CreatedAt: timestamppb.New(at)}
	got, err := plainJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "id": "photos",
  "minUploadFileSize": 0,
  "maxUploadFileSize": 10000000,
  "allowedMimeTypes": [
    "image/*"
  ],
  "cacheControl": "max-age=60",
  "downloadExpiration": 30,`
	if !strings.HasPrefix(string(got), want) {
		t.Fatalf("plainJSON:\n%s\nwant it to start with:\n%s", got, want)
	}
	if !strings.Contains(string(got), `"createdAt": "2026-11-28T12:00:00Z"`) {
		t.Errorf("timestamp not in RFC 3339: %s", got)
	}
	var round map[string]any
	if err := json.Unmarshal(got, &round); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	if _, ok := round["maxUploadFileSize"].(float64); !ok {
		t.Errorf("maxUploadFileSize is %T, want a number", round["maxUploadFileSize"])
	}
	p, err := plainJSON(&adminv1.PresignFileResponse{Url: "http://127.0.0.1/x?a=1&b=2", ExpiresInSeconds: 30})
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"url\": \"http://127.0.0.1/x?a=1&b=2\",\n  \"expiresInSeconds\": 30\n}"; string(p) != want {
		t.Errorf("presign:\n%s\nwant\n%s", p, want)
	}
	again, _ := plainJSON(b)
	if string(again) != string(got) {
		t.Error("two renderings differ")
	}
}
