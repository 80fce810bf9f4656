package bench

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

// TestUploadOps sends uploads with both clients, of a fixture held in memory and of
// one generated while it is sent, and checks what the server received: a valid form,
// the fixture's bytes, a file name per upload, and the ids of the new files recorded.
func TestUploadOps(t *testing.T) {
	for _, client := range []string{"fast", "std"} {
		for _, size := range []int64{smallSize, memFixtureMax + patternBlock + 5} {
			t.Run(client+"/"+strconv.FormatInt(size, 10), func(t *testing.T) {
				api := newFakeAPI()
				srv := httptest.NewServer(api.handler())
				defer srv.Close()
				f := Fixture{Name: "t.bin", Size: size, ContentType: "application/x-test"}
				ep, ops := uploadEndpoint(t, srv.URL, client, f, 2, "default")
				want := fixtureBytes(t, f)
				names := map[string]bool{}
				for i := range 3 {
					for id, o := range ops {
						w := &workerState{id: id, buf: make([]byte, 64<<10), seq: i}
						out := o.do(context.Background(), w, time.Now())
						if out.kind != kindOK || out.status != 201 || out.bytes != size {
							t.Fatalf("upload: %+v", out)
						}
						names["bench-upload-"+strconv.Itoa(id)+"-"+strconv.Itoa(i+1)+"-t.bin"] = true
					}
				}
				ids := ep.created.take()
				api.mu.Lock()
				defer api.mu.Unlock()
				if len(ids) != 6 || len(api.files) != 6 || len(api.bad) != 0 {
					t.Fatalf("recorded %d ids, server holds %d files; protocol errors %v", len(ids), len(api.files), api.bad)
				}
				for _, id := range ids {
					if !bytes.Equal(api.files[id], want) {
						t.Errorf("file %s: %d bytes, not the fixture's", id, len(api.files[id]))
					}
					if !names[api.names[id]] {
						t.Errorf("file %s named %q, want one of %v", id, api.names[id], names)
					}
					delete(names, api.names[id])
				}
			})
		}
	}
}

// TestUploadOpErrors checks that a refused upload is its status and records no id.
func TestUploadOpErrors(t *testing.T) {
	for _, client := range []string{"fast", "std"} {
		api := newFakeAPI()
		srv := httptest.NewServer(api.handler())
		f := Fixture{Name: "t.bin", Size: 10, ContentType: "text/plain"}
		ep, ops := uploadEndpoint(t, srv.URL, client, f, 1, "missing")
		out := ops[0].do(context.Background(), &workerState{buf: make([]byte, 64<<10)}, time.Now())
		if out.kind != kind4xx || out.status != 400 || len(ep.created.take()) != 0 {
			t.Errorf("%s: upload into a missing bucket: %+v", client, out)
		}
		srv.Close()
	}
}

// uploadEndpoint returns an endpoint on url with the given client and n upload ops of
// f into bucket.
func uploadEndpoint(t *testing.T, url, client string, f Fixture, n int, bucket string) (*endpointRun, []op) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.A.Target, cfg.AdminSecret, cfg.Client = url, "s", client
	r, err := NewRunner(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := r.newEndpoint("A", cfg.A, nil)
	ep.bucket = bucket
	newOp, _, err := ep.uploadFactory(Scenario{Name: "u", Kind: KindUpload, Fixture: f})
	if err != nil {
		t.Fatal(err)
	}
	ops := make([]op, n)
	for i := range ops {
		ops[i] = newOp(t.Context(), i)
		t.Cleanup(func() { closeOp(ops[i]) })
	}
	return ep, ops
}
