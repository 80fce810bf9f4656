package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeAPI is a minimal coffer API in memory: buckets, multipart uploads, downloads
// and deletes, all requiring the admin secret.
type fakeAPI struct {
	mu      sync.Mutex
	buckets map[string]bool
	files   map[string][]byte // id → content
	bucket  map[string]string // id → bucket
	names   map[string]string // id → file name
	uploads int
	bad     []string // protocol violations seen
	seq     int
	ops     []byte // 'U' per upload, 'D' per delete, in the order served
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{buckets: map[string]bool{"default": true}, files: map[string][]byte{}, bucket: map[string]string{},
		names: map[string]string{}}
}

func (f *fakeAPI) handler() http.Handler {
	m := http.NewServeMux()
	m.HandleFunc("POST /v1/buckets", f.createBucket)
	m.HandleFunc("DELETE /v1/buckets/{id}", f.deleteBucket)
	m.HandleFunc("POST /v1/files", f.upload)
	m.HandleFunc("GET /v1/files/{id}", f.download)
	m.HandleFunc("DELETE /v1/files/{id}", f.deleteFile)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Hasura-Admin-Secret") != "s" {
			http.Error(w, "no admin secret", http.StatusUnauthorized)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		m.ServeHTTP(w, r)
	})
}

func (f *fakeAPI) createBucket(w http.ResponseWriter, r *http.Request) {
	var in struct {
		ID  string `json:"id"`
		Max int64  `json:"maxUploadFileSize"`
	}
	if json.NewDecoder(r.Body).Decode(&in) != nil || in.ID == "" || in.Max < largeSize {
		http.Error(w, "bad bucket", http.StatusBadRequest)
		return
	}
	f.buckets[in.ID] = true
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"id":%q}`, in.ID)
}

func (f *fakeAPI) deleteBucket(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	for _, b := range f.bucket {
		if b == id {
			http.Error(w, "bucket not empty", http.StatusConflict)
			return
		}
	}
	delete(f.buckets, id)
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeAPI) upload(w http.ResponseWriter, r *http.Request) {
	mr, err := r.MultipartReader()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p, err := mr.NextPart()
	if err != nil || p.FormName() != "bucket-id" {
		f.bad = append(f.bad, "first part is not bucket-id")
		http.Error(w, "bucket-id first", http.StatusBadRequest)
		return
	}
	b, _ := io.ReadAll(p)
	p, err = mr.NextPart()
	if err != nil || p.FormName() != "file[]" || !f.buckets[string(b)] {
		f.bad = append(f.bad, "second part is not file[] or unknown bucket "+string(b))
		http.Error(w, "file[]", http.StatusBadRequest)
		return
	}
	content, _ := io.ReadAll(p)
	f.seq++
	id := fmt.Sprintf("id-%d", f.seq)
	f.files[id], f.bucket[id], f.names[id] = content, string(b), p.FileName()
	f.uploads++
	f.ops = append(f.ops, 'U')
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"processedFiles":[{"id":%q,"name":%q}]}`, id, p.FileName())
}

func (f *fakeAPI) download(w http.ResponseWriter, r *http.Request) {
	c, ok := f.files[r.PathValue("id")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	_, _ = w.Write(c)
}

func (f *fakeAPI) deleteFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := f.files[id]; !ok {
		http.NotFound(w, r)
		return
	}
	delete(f.files, id)
	delete(f.bucket, id)
	f.ops = append(f.ops, 'D')
	w.WriteHeader(http.StatusNoContent)
}

func fixtureBytes(t *testing.T, f Fixture) []byte {
	t.Helper()
	r := f.Open()
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunAgainstFakeAPICleansUp(t *testing.T) {
	api := newFakeAPI()
	srv := httptest.NewServer(api.handler())
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.A.Target, cfg.AdminSecret = srv.URL, "s"
	cfg.Scenarios = []string{"download_small_file", "upload_small_file"}
	cfg.Ramp, cfg.Hold, cfg.Workers, cfg.Interval = 0, 250*time.Millisecond, 3, 50*time.Millisecond
	var log bytes.Buffer
	r, err := NewRunner(cfg, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	small := Scenarios()[0].Fixture
	want := fixtureBytes(t, small)
	res, err := r.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if len(res.Runs) != 2 {
		t.Fatalf("%d runs, want 2", len(res.Runs))
	}
	for _, run := range res.Runs {
		if run.Requests == 0 || run.Errors != 0 || run.Bytes != run.Requests*int64(len(want)) {
			t.Errorf("%s: requests %d errors %d %v bytes %d", run.Scenario, run.Requests, run.Errors, run.ErrorsByKind, run.Bytes)
		}
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	if len(api.files) != 0 || len(api.buckets) != 1 || len(api.bad) != 0 {
		t.Errorf("left behind: files %d, buckets %v; protocol errors %v\n%s", len(api.files), api.buckets, api.bad, log.String())
	}
	if int64(api.uploads) != res.Runs[1].Requests+1 { // + the download fixture
		t.Errorf("server saw %d uploads, run counted %d", api.uploads, res.Runs[1].Requests)
	}
	if !strings.Contains(log.String(), "deleted bucket bench-") {
		t.Errorf("log: %s", log.String())
	}
}

// TestUploadRunDeletesAfterwards checks that an upload run's files are deleted after
// the run, none while it is measured (a DELETE inside the run would take the worker's
// time and the server's), and all of them before the run returns.
func TestUploadRunDeletesAfterwards(t *testing.T) {
	api := newFakeAPI()
	srv := httptest.NewServer(api.handler())
	defer srv.Close()
	cfg := DefaultConfig()
	cfg.A.Target, cfg.AdminSecret = srv.URL, "s"
	cfg.Scenarios = []string{"upload_small_file"}
	cfg.Ramp, cfg.Hold, cfg.Workers, cfg.Interval = 0, 200*time.Millisecond, 3, 50*time.Millisecond
	var log bytes.Buffer
	r, err := NewRunner(cfg, &log, nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := r.newEndpoint("A", cfg.A, nil)
	if err := ep.setup(context.Background(), nil, &log); err != nil {
		t.Fatal(err)
	}
	scs, err := SelectScenarios([]string{"upload_small_file"}, true)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := r.runOne(context.Background(), ep, scs[0], 1)
	if err != nil || rr.Requests == 0 || rr.Errors != 0 {
		t.Fatalf("runOne: %v, %d requests, %d errors", err, rr.Requests, rr.Errors)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	ops := string(api.ops)
	want := strings.Repeat("U", int(rr.Requests)) + strings.Repeat("D", int(rr.Requests))
	if ops != want || len(api.files) != 0 {
		t.Errorf("server saw %q with %d files left; want every upload (%d) before every delete and none left", ops, len(api.files), rr.Requests)
	}
}

func TestUploadSendsTheFixture(t *testing.T) {
	api := newFakeAPI()
	srv := httptest.NewServer(api.handler())
	defer srv.Close()
	f := Scenarios()[0].Fixture
	client := newClient(newTransport(1), 10*time.Second)
	a := newAPIClient(srv.URL+"/", client, credentials{adminSecret: "s"})
	id, err := a.uploadFixture(context.Background(), "default", f)
	if err != nil {
		t.Fatal(err)
	}
	if got := api.files[id]; !bytes.Equal(got, fixtureBytes(t, f)) || int64(len(got)) != f.Size {
		t.Errorf("uploaded %d bytes, not the fixture's %d", len(got), f.Size)
	}
	if err := a.deleteFile(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	err = a.deleteFile(context.Background(), id)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("second delete: %v, want a 404 error", err)
	}
}
