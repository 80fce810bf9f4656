package rpcapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/memblob"
	"github.com/coffer/coffer/meta/metatest"
	"github.com/coffer/coffer/meta/sqlite"
	"github.com/coffer/coffer/rpcapi"
	"github.com/coffer/coffer/service"
)

// benchFolders and benchPerFolder lay out the listing benchmark's bucket: 100,000
// files, 100 in each of 1,000 folders ("d000/" to "d999/").
const benchFolders, benchPerFolder = 1000, 100

// BenchmarkListFiles lists a page of 100 entries of a bucket of 100,000 files
// through the RPC handler (in process, no network) in Connect JSON, over SQLite, as
// the admin: "folders" is the bucket's top level with delimiter "/" (100 prefixes,
// each a seek past 100 files), "files" one folder's 100 files with delimiter "/",
// "flat" the first 100 files without a delimiter. It reports the server's own
// Server-Timing app duration (server-ms/op) besides ns/op.
func BenchmarkListFiles(b *testing.B) {
	h := benchListHandler(b)
	for _, bc := range []struct{ name, body string }{
		{"folders", `{"bucketId":"default","delimiter":"/","pageSize":100}`},
		{"files", `{"bucketId":"default","prefix":"d500/","delimiter":"/","pageSize":100}`},
		{"flat", `{"bucketId":"default","pageSize":100}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var server time.Duration
			for b.Loop() {
				server += benchListCall(b, h, bc.body)
			}
			b.ReportMetric(float64(server.Microseconds())/1000/float64(b.N), "server-ms/op")
		})
	}
}

// benchListCall makes one ListFiles call, checks it answered a full page, and
// returns the app duration of its Server-Timing header.
func benchListCall(b *testing.B, h http.Handler, body string) time.Duration {
	r := httptest.NewRequest(http.MethodPost, "/coffer.admin.v1.FileService/ListFiles", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var out struct {
		Files    []json.RawMessage
		Prefixes []string
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &out) != nil || len(out.Files)+len(out.Prefixes) != 100 {
		b.Fatalf("ListFiles %s: %d %.300s", body, w.Code, w.Body.String())
	}
	st := w.Header().Get("Server-Timing")
	_, app, _ := strings.Cut(st, "app;dur=")
	app, _, _ = strings.Cut(app, ",")
	ms, err := strconv.ParseFloat(app, 64)
	if err != nil {
		b.Fatalf("Server-Timing %q: %v", st, err)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// benchListHandler returns the RPC face over a service over SQLite holding the
// benchmark's files (metatest.FillFolders).
func benchListHandler(b *testing.B) http.Handler {
	ctx := context.Background()
	m, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	mustTB(b, "sqlite.Open", err)
	b.Cleanup(func() { m.Close() })
	mustTB(b, "Migrate", m.Migrate(ctx))
	start := time.Now()
	mustTB(b, "FillFolders", metatest.FillFolders(ctx, m, benchFolders, benchPerFolder))
	b.Logf("%d files stored in %v", benchFolders*benchPerFolder, time.Since(start).Round(time.Millisecond))
	svc, err := service.New(service.DefaultConfig(), m, blob.New(memblob.New()), service.Caches{}, slog.New(slog.DiscardHandler))
	mustTB(b, "service.New", err)
	authn, err := auth.New(auth.Config{AdminSecret: adminSecret, UnauthorizedRole: "public"})
	mustTB(b, "auth.New", err)
	h, err := rpcapi.New(rpcapi.DefaultConfig(), svc, nil, nil, authn, slog.New(slog.DiscardHandler))
	mustTB(b, "rpcapi.New", err)
	return h
}

// mustTB fails tb on err.
func mustTB(tb testing.TB, what string, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatalf("%s: %v", what, err)
	}
}
