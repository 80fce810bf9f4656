package service_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
	"lukechampine.com/blake3"
)

// ownerRules let role "user" upload to every bucket as itself, read every file there
// and replace or delete its own; role "viewer" may only read.
const ownerRules = `{"rules":[
 {"role":"user","buckets":["*"],
  "upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
  "read":{},
  "replace":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
  "delete":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}},
 {"role":"viewer","buckets":["*"],"read":{}}]}`

// newService returns a service without caches over a fresh SQLite store and memory
// blobs, with the rules document installed ("": none).
func newService(t *testing.T, rules string) (*service.Service, *sqlite.Store, *blob.Store) {
	t.Helper()
	m, blobs := openSQLite(t), blob.New(memblob.New())
	svc, err := service.New(service.DefaultConfig(), m, blobs, service.Caches{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if rules != "" {
		must(t, svc.SetRules(context.Background(), coffer.AdminPrincipal(), []byte(rules)))
	}
	return svc, m, blobs
}

// user returns the principal of role "user" with user id id (none if "").
func user(id string) *coffer.Principal {
	p := &coffer.Principal{Role: "user", UserID: id, Session: map[string]string{"x-hasura-role": "user"}}
	if id != "" {
		p.Session["x-hasura-user-id"] = id
	}
	return p
}

// part is one file of an upload request.
type part struct {
	name, declared, contents string
	size                     int64 // -1: unknown (chunked)
	meta                     *service.UploadMeta
}

// text is a plain text part named a.txt of known size.
func text(contents string) part {
	return part{name: "a.txt", declared: "text/plain", contents: contents, size: int64(len(contents))}
}

// upload runs one upload request of parts into bucket as p, as a face does: begin,
// contents, metadata, commit, and always Abort.
func upload(svc *service.Service, p *coffer.Principal, bucket string, parts ...part) ([]*coffer.File, error) {
	ctx := context.Background()
	up, err := svc.BeginUpload(ctx, p, bucket)
	if err != nil {
		return nil, err
	}
	defer up.Abort(ctx)
	for i, pt := range parts {
		if err := up.AddContent(ctx, pt.name, pt.declared, strings.NewReader(pt.contents), pt.size); err != nil {
			return nil, err
		}
		if pt.meta != nil {
			if err := up.SetMeta(i, *pt.meta); err != nil {
				return nil, err
			}
		}
	}
	return up.Commit(ctx)
}

// leftovers returns the blob keys and the number of upload intents in the stores.
func leftovers(t *testing.T, m *sqlite.Store, blobs *blob.Store) (string, int) {
	t.Helper()
	intents, err := m.StaleIntents(context.Background(), time.Now().Add(time.Hour))
	must(t, err)
	return keys(t, blobs), len(intents)
}

// wantCode fails unless err has code want.
func wantCode(t *testing.T, what string, err error, want string) {
	t.Helper()
	if got := coffer.ErrorCode(err); got != want {
		t.Fatalf("%s: %q (%v), want %q", what, got, err, want)
	}
}

// A bucket's minimum and maximum sizes and allowed MIME types ("image/*" patterns,
// parameters ignored) apply to every upload, whether its size is declared or not; a
// refused upload leaves no blob and no intent behind.
func TestUploadBucketLimits(t *testing.T) {
	ctx := context.Background()
	svc, m, blobs := newService(t, "")
	admin := coffer.AdminPrincipal()
	minSize, maxSize, types := int64(3), int64(10), []string{"image/*", "text/plain"}
	_, err := svc.CreateBucket(ctx, admin, "limits", coffer.BucketUpdate{MinUploadFileSize: &minSize, MaxUploadFileSize: &maxSize, AllowedMimeTypes: &types})
	must(t, err)
	png := "\x89PNG\r\n\x1a\n"
	for _, c := range []struct {
		name     string
		part     part
		want     string
		wantType string
	}{
		{"fits", text("hello"), "", "text/plain"},
		{"at the minimum", text("abc"), "", "text/plain"},
		{"at the maximum, size unknown", part{name: "a", declared: "text/plain", contents: "0123456789", size: -1}, "", "text/plain"},
		{"parameters ignored", part{name: "a", declared: "text/plain; charset=utf-8", contents: "hello", size: 5}, "", "text/plain; charset=utf-8"},
		{"image/* pattern, sniffed", part{name: "p.png", contents: png, size: int64(len(png))}, "", "image/png"},
		{"below the minimum", text("hi"), coffer.EINVALID, ""},
		{"above the maximum, size known", text("0123456789X"), coffer.ETOOLARGE, ""},
		{"above the maximum, size unknown", part{name: "a", declared: "text/plain", contents: "0123456789X", size: -1}, coffer.ETOOLARGE, ""},
		{"type not allowed", part{name: "a.json", declared: "application/json", contents: `{"a":1}`, size: 7}, coffer.EUNSUPPORTED, ""},
	} {
		beforeKeys, _ := leftovers(t, m, blobs)
		files, err := upload(svc, admin, "limits", c.part)
		wantCode(t, c.name, err, c.want)
		if c.want != "" {
			if k, n := leftovers(t, m, blobs); k != beforeKeys || n != 0 {
				t.Fatalf("%s: refused upload left blobs %q (before %q) and %d intents", c.name, k, beforeKeys, n)
			}
			continue
		}
		if f := files[0]; f.MimeType != c.wantType || f.Size != int64(len(c.part.contents)) || f.BucketID != "limits" {
			t.Fatalf("%s: stored %s, %d bytes in %s", c.name, f.MimeType, f.Size, f.BucketID)
		}
	}
}

// A role's max_size caps the bucket's maximum for that role only.
func TestUploadRoleSizeCap(t *testing.T) {
	svc, _, _ := newService(t, `{"rules":[{"role":"user","buckets":["default"],"upload":{"max_size":4}}]}`)
	_, err := upload(svc, user("u1"), "default", text("12345"))
	wantCode(t, "user above the role's cap", err, coffer.ETOOLARGE)
	_, err = upload(svc, user("u1"), "default", text("1234"))
	wantCode(t, "user at the role's cap", err, "")
	_, err = upload(svc, coffer.AdminPrincipal(), "default", text("12345"))
	wantCode(t, "admin", err, "")
	_, err = upload(svc, &coffer.Principal{Role: "viewer"}, "default", text("1"))
	wantCode(t, "role without upload rule", err, coffer.EFORBIDDEN)
	_, err = upload(svc, coffer.AdminPrincipal(), "nope", text("1"))
	wantCode(t, "missing bucket", err, coffer.ENOTFOUND)
}

// Presets are forced onto new files whatever the client sends; a preset whose session
// variable the token lacks, and a file failing the rule's check, are refused.
func TestUploadPresetsAndCheck(t *testing.T) {
	svc, m, blobs := newService(t, `{"rules":[{"role":"user","buckets":["default"],"upload":{
		"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"},"check":{"size":{"_lte":5}}}}]}`)
	files, err := upload(svc, user("u1"), "default", text("12345"))
	must(t, err)
	if files[0].UploadedByUserID != "u1" {
		t.Fatalf("uploaded by %q, want the caller u1", files[0].UploadedByUserID)
	}
	_, err = upload(svc, user(""), "default", text("1"))
	wantCode(t, "token without x-hasura-user-id", err, coffer.EFORBIDDEN)
	if !strings.Contains(err.Error(), "x-hasura-user-id") {
		t.Fatalf("the refusal does not name the missing variable: %v", err)
	}
	_, err = upload(svc, user("u1"), "default", text("123456"), text("1"))
	wantCode(t, "one file failing the check", err, coffer.EFORBIDDEN)
	if k, n := leftovers(t, m, blobs); k != files[0].BlobKey || n != 0 {
		t.Fatalf("a refused commit left blobs %q and %d intents", k, n)
	}
	files, err = upload(svc, coffer.AdminPrincipal(), "default", text("123456"))
	must(t, err)
	if files[0].UploadedByUserID != "" {
		t.Fatalf("admin upload got uploader %q from a role's preset", files[0].UploadedByUserID)
	}
}

// A client-chosen id that is taken answers users one uniform ECONFLICT that neither
// repeats the id nor depends on whether they may read the file; admins get the
// store's conflict. A malformed id is EINVALID.
func TestUploadClientIDTaken(t *testing.T) {
	svc, m, blobs := newService(t, `{"rules":[{"role":"user","buckets":["default"],
		"upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
		"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`)
	id := coffer.NewFileID()
	withID := func(id string) part { p := text("abc"); p.meta = &service.UploadMeta{ID: id}; return p }
	files, err := upload(svc, user("u1"), "default", withID(strings.ToUpper(id)))
	must(t, err)
	if files[0].ID != id {
		t.Fatalf("stored id %s, want %s", files[0].ID, id)
	}
	_, errOwner := upload(svc, user("u1"), "default", withID(id))
	_, errOther := upload(svc, user("u2"), "default", withID(id))
	wantCode(t, "owner reusing the id", errOwner, coffer.ECONFLICT)
	wantCode(t, "another user reusing the id", errOther, coffer.ECONFLICT)
	if errOwner.Error() != errOther.Error() || strings.Contains(errOther.Error(), id) {
		t.Fatalf("the answers differ or name the id: %q / %q", errOwner, errOther)
	}
	_, err = upload(svc, coffer.AdminPrincipal(), "default", withID(id))
	wantCode(t, "admin reusing the id", err, coffer.ECONFLICT)
	_, err = upload(svc, user("u1"), "default", withID("not-a-uuid"))
	wantCode(t, "malformed id", err, coffer.EINVALID)
	if k, n := leftovers(t, m, blobs); k != files[0].BlobKey || n != 0 {
		t.Fatalf("refused uploads left blobs %q and %d intents", k, n)
	}
}

// An upload cut off after its contents arrived (no Commit, no Abort: the process died)
// leaves an intent that protects its blob from the orphan sweep and no file row;
// Sweep, once the intent is stale, removes both, and a late commit then fails.
func TestAbandonedUploadIsSwept(t *testing.T) {
	ctx := context.Background()
	svc, m, blobs := newService(t, "")
	admin := coffer.AdminPrincipal()
	up, err := svc.BeginUpload(ctx, admin, "default")
	must(t, err)
	must(t, up.AddContent(ctx, "a.txt", "text/plain", strings.NewReader("abc"), 3))
	key, n := leftovers(t, m, blobs)
	if key == "" || n != 1 {
		t.Fatalf("after the contents: blobs %q, %d intents", key, n)
	}
	if orphans, err := svc.ListOrphans(ctx, admin); err != nil || len(orphans) != 0 {
		t.Fatalf("an upload in progress listed as orphan: %q, %v", orphans, err)
	}
	page, err := svc.ListFiles(ctx, admin, coffer.ListOptions{BucketID: "default", Limit: 10})
	must(t, err)
	if len(page.Files) != 0 {
		t.Fatalf("an uncommitted upload is listed: %d files", len(page.Files))
	}
	rep, err := svc.Sweep(ctx, time.Now().Add(-time.Minute))
	must(t, err)
	if rep.AbandonedUploads != 0 || len(rep.OrphanBlobs) != 0 {
		t.Fatalf("a fresh upload was swept: %+v", rep)
	}
	rep, err = svc.Sweep(ctx, time.Now().Add(time.Minute))
	must(t, err)
	if rep.AbandonedUploads != 1 || strings.Join(rep.OrphanBlobs, " ") != key {
		t.Fatalf("sweep %+v, want 1 upload and blob %s", rep, key)
	}
	if k, n := leftovers(t, m, blobs); k != "" || n != 0 {
		t.Fatalf("after the sweep: blobs %q, %d intents", k, n)
	}
	_, err = up.Commit(ctx)
	wantCode(t, "commit after the sweep", err, coffer.EABORTED)
}

// A user's upload swept as abandoned before its commit is told so (EABORTED, 409:
// retry), not that its file id is taken (ECONFLICT), which a user's refused insert
// otherwise means.
func TestAbandonedUserUploadSaysSo(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, ownerRules)
	up, err := svc.BeginUpload(ctx, user("u1"), "default")
	must(t, err)
	must(t, up.AddContent(ctx, "a.txt", "text/plain", strings.NewReader("abc"), 3))
	_, err = svc.Sweep(ctx, time.Now().Add(time.Minute))
	must(t, err)
	_, err = up.Commit(ctx)
	wantCode(t, "commit after the sweep", err, coffer.EABORTED)
	if msg := coffer.ErrorMessage(err); !strings.Contains(msg, "abandoned") {
		t.Errorf("commit after the sweep: %q, want a message saying the upload was abandoned", msg)
	}
}

// failingBody returns some bytes, then the error of a client that went away.
type failingBody struct{ sent bool }

// Read returns "partial" once, then the error.
func (b *failingBody) Read(p []byte) (int, error) {
	if b.sent {
		return 0, errors.New("connection reset by peer")
	}
	b.sent = true
	return copy(p, "partial"), nil
}

// A request body that fails mid-stream is the client's fault (EINVALID), and its
// partial blob and intent are removed at once.
func TestUploadBodyFailureCleansUp(t *testing.T) {
	ctx := context.Background()
	svc, m, blobs := newService(t, "")
	up, err := svc.BeginUpload(ctx, coffer.AdminPrincipal(), "default")
	must(t, err)
	defer up.Abort(ctx)
	err = up.AddContent(ctx, "a.txt", "text/plain", &failingBody{}, -1)
	wantCode(t, "failing body", err, coffer.EINVALID)
	if !strings.Contains(err.Error(), "reading the upload body") {
		t.Fatalf("error %v", err)
	}
	if k, n := leftovers(t, m, blobs); k != "" || n != 0 {
		t.Fatalf("a failed body left blobs %q and %d intents", k, n)
	}
	_, err = up.Commit(ctx)
	wantCode(t, "commit without a file", err, coffer.EINVALID)
}

// The shape of an upload request: names come from metadata[] or the part, metadata
// is validated and compacted, metadata[] needs its file[], and a replace takes one
// file whose metadata id, if any, is the replaced file's.
func TestUploadRequestShape(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, "")
	admin := coffer.AdminPrincipal()
	named := text("abc")
	named.meta = &service.UploadMeta{Name: "dir/b.txt", Metadata: []byte(` { "z": 1.50, "a": [1, 2] } `)}
	files, err := upload(svc, admin, "default", named, text("xyz"))
	must(t, err)
	if files[0].Name != "dir/b.txt" || string(files[0].Metadata) != `{"z":1.50,"a":[1,2]}` || files[1].Name != "a.txt" || string(files[1].Metadata) != "{}" {
		t.Fatalf("stored %q %s and %q %s", files[0].Name, files[0].Metadata, files[1].Name, files[1].Metadata)
	}
	for name, p := range map[string]part{
		"no name":           {contents: "abc", size: 3},
		"backslash name":    {name: `a\b`, contents: "abc", size: 3},
		"metadata an array": {name: "a", contents: "abc", size: 3, meta: &service.UploadMeta{Metadata: []byte(`[1]`)}},
	} {
		_, err := upload(svc, admin, "default", p)
		wantCode(t, name, err, coffer.EINVALID)
	}

	up, err := svc.BeginUpload(ctx, admin, "default")
	must(t, err)
	defer up.Abort(ctx)
	must(t, up.SetMeta(1, service.UploadMeta{Name: "x"}))
	wantCode(t, "metadata given twice", up.SetMeta(1, service.UploadMeta{Name: "y"}), coffer.EINVALID)
	must(t, up.AddContent(ctx, "a", "text/plain", strings.NewReader("abc"), 3))
	wantCode(t, "metadata[1] without file[1]", second(up.Commit(ctx)), coffer.EINVALID)

	rp, err := svc.BeginReplace(ctx, admin, files[0].ID)
	must(t, err)
	defer rp.Abort(ctx)
	must(t, rp.AddContent(ctx, "a", "text/plain", strings.NewReader("new"), 3))
	wantCode(t, "a second file in a replace", rp.AddContent(ctx, "b", "text/plain", strings.NewReader("d"), 1), coffer.EINVALID)
	must(t, rp.SetMeta(0, service.UploadMeta{ID: files[1].ID}))
	wantCode(t, "replace naming another id", second(rp.Commit(ctx)), coffer.EINVALID)
	if got := read(t, svc, admin, files[0].ID); got != "abc" {
		t.Fatalf("refused replace changed the contents: %q", got)
	}
}

// An upload whose bucket is named after its files (BeginUploadLater) streams under the
// largest limit of the buckets the caller may upload to; SetBucket then applies the
// named bucket's MIME and size rules to what arrived, and a commit needs the bucket.
func TestUploadLater(t *testing.T) {
	ctx := context.Background()
	svc, _, _ := newService(t, `{"rules":[{"role":"user","buckets":["*"],"upload":{}},
		{"role":"small","buckets":["tiny"],"upload":{"max_size":3}}]}`)
	for id, u := range map[string]coffer.BucketUpdate{
		"images": {AllowedMimeTypes: &[]string{"image/*"}},
		"tiny":   {MaxUploadFileSize: ptr(int64(4))},
		"big":    {MinUploadFileSize: ptr(int64(10))},
	} {
		_, err := svc.CreateBucket(ctx, coffer.AdminPrincipal(), id, u)
		must(t, err)
	}
	wantCode(t, "a role that may upload nowhere", second(svc.BeginUploadLater(ctx, &coffer.Principal{Role: "viewer"})), coffer.EFORBIDDEN)
	small, err := svc.BeginUploadLater(ctx, &coffer.Principal{Role: "small"})
	must(t, err)
	defer small.Abort(ctx)
	wantCode(t, "above the only bucket's capped maximum", small.AddContent(ctx, "a", "text/plain", strings.NewReader("abcd"), -1), coffer.ETOOLARGE)

	up, err := svc.BeginUploadLater(ctx, user("u1"))
	must(t, err)
	defer up.Abort(ctx)
	if !up.Deferred() || up.Bucket().MaxUploadFileSize != coffer.NewBucket("x").MaxUploadFileSize {
		t.Fatalf("deferred %v, provisional maximum %d", up.Deferred(), up.Bucket().MaxUploadFileSize)
	}
	must(t, up.AddContent(ctx, "a.txt", "text/plain", strings.NewReader("hello"), 5))
	wantCode(t, "commit before the bucket", second(up.Commit(ctx)), coffer.EINVALID)
	wantCode(t, "a bucket refusing the type", up.SetBucket(ctx, "images"), coffer.EUNSUPPORTED)
	wantCode(t, "a bucket with a lower maximum", up.SetBucket(ctx, "tiny"), coffer.ETOOLARGE)
	wantCode(t, "a bucket with a higher minimum", up.SetBucket(ctx, "big"), coffer.EINVALID)
	wantCode(t, "a missing bucket", up.SetBucket(ctx, "gone"), coffer.ENOTFOUND)
	must(t, up.SetBucket(ctx, "default"))
	wantCode(t, "naming the bucket twice", up.SetBucket(ctx, "default"), coffer.EINVALID)
	files, err := up.Commit(ctx)
	must(t, err)
	if files[0].BucketID != "default" || read(t, svc, coffer.AdminPrincipal(), files[0].ID) != "hello" {
		t.Fatalf("committed into %q", files[0].BucketID)
	}
}

// TestUploadETagHash: the ETag is the quoted MD5 of the contents by default and the
// quoted BLAKE3-256 with Config.ETag = ETagBLAKE3 (here of a replacement: uploads
// share its writeBlob); an unknown hash name is refused.
func TestUploadETagHash(t *testing.T) {
	contents := strings.Repeat("coffer ", 100_000) // past the inline hashing limit
	md5sum, b3sum := md5.Sum([]byte(contents)), blake3.Sum256([]byte(contents))
	for kind, want := range map[string]string{service.ETagMD5: hex.EncodeToString(md5sum[:]), service.ETagBLAKE3: hex.EncodeToString(b3sum[:])} {
		cfg := service.DefaultConfig()
		cfg.ETag = kind
		svc, err := service.New(cfg, openSQLite(t), blob.New(memblob.New()), service.Caches{}, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		f := put(t, svc, coffer.AdminPrincipal(), "", "first")
		f = put(t, svc, coffer.AdminPrincipal(), f.ID, contents)
		if f.ETag != `"`+want+`"` {
			t.Errorf("%s: replace ETag %s, want %q", kind, f.ETag, want)
		}
	}
	cfg := service.DefaultConfig()
	cfg.ETag = "sha1"
	if err := cfg.Validate(); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("ETag sha1: Validate = %v, want EINVALID", err)
	}
}

// An upload past the tenant's quota is the client's error (507): the service warns,
// at most once per 10 s per tenant (counting the refusals in between), and never
// logs it as an error.
func TestQuotaRefusalWarnsRateLimited(t *testing.T) {
	m := openSQLite(t)
	ctx := context.Background()
	must(t, m.CreateTenant(ctx, &coffer.Tenant{ID: "q", Quota: coffer.Quota{MaxBytes: 4}}))
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	svc, err := service.New(service.DefaultConfig(), m.ForTenant("q"), blob.New(memblob.New()), service.Caches{}, log)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := upload(svc, coffer.AdminPrincipal(), coffer.DefaultBucketID, text("too large")); coffer.ErrorCode(err) != coffer.EQUOTA {
			t.Fatalf("upload past the quota: %v, want EQUOTA", err)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=WARN") || !strings.Contains(lines[0], "quota") ||
		!strings.Contains(lines[0], "bucket=default") {
		t.Fatalf("log after 5 refusals:\n%s\nwant one WARN line naming the quota and the bucket", logs.String())
	}
}
