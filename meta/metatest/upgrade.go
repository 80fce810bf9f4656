package metatest

import (
	"io/fs"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// The rows an engine's upgrade test writes with the SQL of the schema before tenants
// (one of every table), for CheckTenantsUpgrade: a bucket "old" and, in the default
// bucket and "old", an uploaded file, an uploaded named file, a file whose upload is in
// progress with its intent, a bare intent, rules, a subscription with an event and its
// delivery, and a rejection. Times are OldTime.
const (
	OldBucket     = "old"
	OldFile       = "0a000000-0000-4000-8000-000000000001" // in "old", 5 bytes, key OldFileKey
	OldFileKey    = "old/file"
	OldNamed      = "0a000000-0000-4000-8000-000000000002" // named "n" in the default bucket, 7 bytes
	OldNamedKey   = "old/named"
	OldPending    = "0a000000-0000-4000-8000-000000000003" // not uploaded, intent OldPendingKey
	OldPendingKey = "old/pending"
	OldIntentKey  = "old/intent" // an intent without a file
	OldRules      = `{"old":true}`
	OldSub        = "0a000000-0000-4000-8000-000000000004" // every event, URL OldURL, secret OldSecret
	OldURL        = "http://127.0.0.1:1/old"
	OldSecret     = "old-secret"
	OldEvent      = "0a000000-0000-4000-8000-000000000005" // payload OldPayload, one pending delivery
	OldPayload    = `{"old":1}`
	OldRejection  = "0a000000-0000-4000-8000-000000000006"
)

// OldTime is the time of every old row (Unix microseconds 1.7e15).
var OldTime = time.UnixMicro(1_700_000_000_000_000).UTC()

// MigrateOld builds the schema of version v on an empty database: it runs
// migrationsTable (the engine's schema_migrations) and the migrations of dir
// "migrations" in fsys up to v with exec, recording each (applied_at = OldTime, as
// arg), without anything the current code would add (such as the default bucket).
func MigrateOld(t *testing.T, exec func(q string, args ...any) error, migrationsTable string, fsys fs.FS, v int, at any) {
	t.Helper()
	ms, err := meta.LoadMigrations(fsys, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	must(t, exec(migrationsTable))
	for _, m := range ms {
		if m.Version <= v {
			must(t, exec(m.SQL))
			must(t, exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`, m.Version, m.Name, at))
		}
	}
}

// CheckTenantsUpgrade checks s, migrated from a database holding the old rows above:
// every row is the default tenant's, unchanged, its usage counts the uploaded files,
// and a new tenant sees none of it.
func CheckTenantsUpgrade(t *testing.T, s Shared) {
	ctx := t.Context()
	def := view(t, s, coffer.DefaultTenantID)
	b, err := def.GetBucket(ctx, OldBucket)
	must(t, err)
	want := &coffer.Bucket{ID: OldBucket, MinUploadFileSize: 1, MaxUploadFileSize: 100,
		AllowedMimeTypes: []string{"image/png"}, CacheControl: "max-age=1", DownloadExpiration: 30,
		PresignedURLsEnabled: true, AllowInline: true, CreatedAt: OldTime, UpdatedAt: OldTime}
	checkBucket(t, b, want, true)
	file := oldFile(OldFile, OldBucket, "f", 5, OldFileKey, true)
	got, err := def.GetFile(ctx, OldFile)
	must(t, err)
	checkFile(t, got, file)
	got, err = def.GetFileByName(ctx, coffer.DefaultBucketID, "n")
	must(t, err)
	checkFile(t, got, oldFile(OldNamed, coffer.DefaultBucketID, "n", 7, OldNamedKey, true))
	pending, err := def.ListNotUploaded(ctx, 10)
	must(t, err)
	if len(pending) != 1 {
		t.Fatalf("not uploaded: %d files, want 1", len(pending))
	}
	checkFile(t, pending[0], oldFile(OldPending, coffer.DefaultBucketID, "p", 0, OldPendingKey, false))
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range intentKeys(t, def) {
			yield(k)
		}
	})
	if !slices.Equal(keys, []string{OldIntentKey, OldPendingKey}) {
		t.Errorf("intents %v", keys)
	}
	checkOldRest(t, def)
	mustTenant(t, s, "new")
	fresh := snapshot(t, view(t, s, "new"), &twin{sub: &coffer.Subscription{ID: OldSub}})
	if len(fresh.Buckets) != 1 || len(fresh.Files)+len(fresh.Intents)+len(fresh.Subs)+len(fresh.Deliveries)+
		len(fresh.Rejections)+len(fresh.Rules) > 0 {
		t.Errorf("a new tenant sees old rows: %+v", fresh)
	}
}

// oldFile is one of the old files as it must read back.
func oldFile(id, bucket, name string, size int64, key string, uploaded bool) *coffer.File {
	return &coffer.File{ID: id, BucketID: bucket, Name: name, Size: size, MimeType: "text/plain", ETag: `"e"`,
		IsUploaded: uploaded, UploadedByUserID: "u", Metadata: []byte(`{"k":1}`), BlobKey: key,
		CreatedAt: OldTime, UpdatedAt: OldTime}
}

// checkOldRest checks the old rules, subscription, delivery, rejection and usage.
func checkOldRest(t *testing.T, def scoped) {
	ctx := t.Context()
	doc, err := def.GetRules(ctx)
	must(t, err)
	if string(doc) != OldRules {
		t.Errorf("rules %s", doc)
	}
	sub, err := def.GetSubscription(ctx, OldSub)
	must(t, err)
	if sub.URL != OldURL || !sub.CreatedAt.Equal(OldTime) {
		t.Errorf("subscription %+v", sub)
	}
	cs := claimAll(t, def)
	if len(cs) != 1 || cs[0].URL != OldURL || cs[0].Secret != OldSecret || string(cs[0].Payload) != OldPayload ||
		cs[0].Delivery.EventID != OldEvent || cs[0].Delivery.SubscriptionID != OldSub {
		t.Errorf("claims of the old delivery: %+v", cs)
	}
	rs, err := def.ListRejections(ctx, 10)
	must(t, err)
	if len(rs) != 1 || rs[0].ID != OldRejection || !rs[0].Time.Equal(OldTime) || rs[0].Size != 68 {
		t.Errorf("rejections %+v", rs)
	}
	u, err := def.Usage(ctx)
	must(t, err)
	if want := (coffer.Usage{Bytes: 12, Files: 2}); !reflect.DeepEqual(u, want) {
		t.Errorf("usage after the upgrade %+v, want %+v", u, want)
	}
	checkUsage(t, def)
}
