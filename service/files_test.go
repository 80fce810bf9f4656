package service_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/service"
)

// openSQLite returns a migrated SQLite store in a temp dir, closed at cleanup.
func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	m, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	must(t, m.Migrate(context.Background()))
	return m
}

// record is a list of strings, safe for concurrent use.
type record struct {
	mu   sync.Mutex
	list []string
}

func (r *record) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, s)
}

func (r *record) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// forgetLog is a content cache (the real one, underneath) that records the blob keys
// the service makes it forget.
type forgetLog struct {
	service.ContentCache
	record
}

func (l *forgetLog) Forget(key string) { l.add(key); l.ContentCache.Forget(key) }

// variantLog is a variant cache (the real one, underneath) that records the files
// whose variants the service makes it forget.
type variantLog struct {
	service.VariantCache
	record
}

func (l *variantLog) Forget(ctx context.Context, fileID string) {
	l.add(fileID)
	l.VariantCache.Forget(ctx, fileID)
}

// swapWatch notes, when a replace swaps a file row's blob key, whether the blob the
// row named until then is still in the blob store.
type swapWatch struct {
	meta.Store
	blobs  *blob.Store
	oldKey string
	swaps  int
	kept   bool
}

func (w *swapWatch) CommitUpload(ctx context.Context, id, blobKey string, u coffer.FileUpdate) (*coffer.File, *coffer.File, error) {
	if w.oldKey != "" {
		_, err := w.blobs.Stat(ctx, w.oldKey)
		w.swaps++
		w.kept = err == nil
	}
	return w.Store.CommitUpload(ctx, id, blobKey, u)
}

// cachedService is a service over SQLite and memory blobs, reading through the real
// caches wrapped in forgetLog and variantLog.
func cachedService(t *testing.T, cfg service.Config, m meta.Store, blobs *blob.Store) (*service.Service, *forgetLog, *variantLog) {
	t.Helper()
	content, err := cache.NewContent(blobs, cache.DefaultContentConfig())
	if err != nil {
		t.Fatal(err)
	}
	variants, err := cache.NewVariants(blobs, cache.DefaultVariantConfig(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	cl, vl := &forgetLog{ContentCache: content}, &variantLog{VariantCache: variants}
	svc, err := service.New(cfg, m, blobs, service.Caches{Content: cl, Variants: vl}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return svc, cl, vl
}

// put uploads (or, with id, replaces) one file as p and returns it.
func put(t *testing.T, svc *service.Service, p *coffer.Principal, id, contents string) *coffer.File {
	t.Helper()
	ctx := context.Background()
	var up *service.Upload
	var err error
	if id == "" {
		up, err = svc.BeginUpload(ctx, p, "default")
	} else {
		up, err = svc.BeginReplace(ctx, p, id)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer up.Abort(ctx)
	must(t, up.AddContent(ctx, "a.txt", "text/plain", strings.NewReader(contents), int64(len(contents))))
	files, err := up.Commit(ctx)
	if err != nil || len(files) != 1 {
		t.Fatalf("commit: %v, %d files", err, len(files))
	}
	return files[0]
}

// read returns file id's contents as p reads them.
func read(t *testing.T, svc *service.Service, p *coffer.Principal, id string) string {
	t.Helper()
	_, _, rd, err := svc.OpenFile(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A replace writes a new blob, swaps the row to it while the old blob is still there
// (readers holding the old row can still open it), and only then deletes the old blob,
// dropping it from the content cache and the file's variants; a delete likewise. The
// service is tested directly, through the caches app injects.
func TestReplaceKeepsOldBlobUntilRowSwap(t *testing.T) {
	ctx := context.Background()
	blobs := blob.New(memblob.New())
	watch := &swapWatch{Store: openSQLite(t), blobs: blobs}
	svc, content, variants := cachedService(t, service.DefaultConfig(), watch, blobs)
	admin := coffer.AdminPrincipal()

	f := put(t, svc, admin, "", "old")
	if got := read(t, svc, admin, f.ID); got != "old" { // now in the content cache
		t.Fatalf("read %q", got)
	}
	watch.oldKey = f.BlobKey
	g := put(t, svc, admin, f.ID, "new!")
	if watch.swaps != 1 || !watch.kept {
		t.Fatalf("%d row swaps; old blob still stored at the swap: %v", watch.swaps, watch.kept)
	}
	if _, err := blobs.Stat(ctx, f.BlobKey); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("old blob after the replace: %v", err)
	}
	if g.BlobKey == f.BlobKey || g.ETag == f.ETag {
		t.Fatalf("replace kept blob key %s / etag %s", g.BlobKey, g.ETag)
	}
	if got := read(t, svc, admin, f.ID); got != "new!" {
		t.Fatalf("read after replace %q", got)
	}
	if got := content.all(); !slices.Equal(got, []string{f.BlobKey}) {
		t.Fatalf("content cache forgot %q, want the old blob", got)
	}

	must(t, svc.DeleteFile(ctx, admin, f.ID))
	if _, err := blobs.Stat(ctx, g.BlobKey); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("blob after the delete: %v", err)
	}
	if _, _, err := svc.GetFile(ctx, admin, f.ID); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("GetFile after the delete: %v", err)
	}
	if got := content.all(); !slices.Equal(got, []string{f.BlobKey, g.BlobKey}) {
		t.Fatalf("content cache forgot %q", got)
	}
	if got := variants.all(); !slices.Equal(got, []string{f.ID, f.ID}) {
		t.Fatalf("variants forgotten for %q, want the file's after the replace and the delete", got)
	}
}

// Without caches (service.Caches{}) the service reads every blob from the store.
func TestNoCaches(t *testing.T) {
	blobs := blob.New(memblob.New())
	svc, err := service.New(service.DefaultConfig(), openSQLite(t), blobs, service.Caches{}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	admin := coffer.AdminPrincipal()
	f := put(t, svc, admin, "", "abc")
	for range 2 {
		before := blobs.Calls()
		if got := read(t, svc, admin, f.ID); got != "abc" || blobs.Calls() != before+1 {
			t.Fatalf("read %q with %d blob store calls, want 1", got, blobs.Calls()-before)
		}
	}
	must(t, svc.DeleteFile(context.Background(), admin, f.ID))
}

// HideForbidden answers ENOTFOUND where a role has no permission at all for an action
// on files, instead of hasura-storage's EFORBIDDEN; either way the answer does not
// depend on whether the file exists.
func TestHideForbidden(t *testing.T) {
	ctx := context.Background()
	rules := []byte(`{"rules":[{"role":"reader","buckets":["default"],"read":{}}]}`)
	nobody, reader := &coffer.Principal{Role: "nobody"}, &coffer.Principal{Role: "reader"}
	for _, hide := range []bool{false, true} {
		cfg := service.DefaultConfig()
		cfg.HideForbidden = hide
		svc, _, _ := cachedService(t, cfg, openSQLite(t), blob.New(memblob.New()))
		must(t, svc.SetRules(ctx, coffer.AdminPrincipal(), rules))
		f := put(t, svc, coffer.AdminPrincipal(), "", "x")
		want := coffer.EFORBIDDEN
		if hide {
			want = coffer.ENOTFOUND
		}
		for name, err := range map[string]error{
			"read, no read rule":           third(svc.GetFile(ctx, nobody, f.ID)),
			"read a missing file, no rule": third(svc.GetFile(ctx, nobody, coffer.NewFileID())),
			"delete, no delete rule":       svc.DeleteFile(ctx, reader, f.ID),
			"replace, no replace rule":     second(svc.BeginReplace(ctx, reader, f.ID)),
		} {
			if got := coffer.ErrorCode(err); got != want {
				t.Errorf("HideForbidden %v, %s: %s (%v), want %s", hide, name, got, err, want)
			}
		}
		if got := read(t, svc, reader, f.ID); got != "x" {
			t.Errorf("HideForbidden %v: reader read %q", hide, got)
		}
	}
}

// second and third return the error of a call's results.
func second[T any](_ T, err error) error        { return err }
func third[T, U any](_ T, _ U, err error) error { return err }
