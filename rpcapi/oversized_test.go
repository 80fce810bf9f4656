package rpcapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"connectrpc.com/connect"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
)

// xs is a body of n bytes of 'x', counting what was read of it (atomically: the
// transport may still be reading when the answer has come).
type xs struct {
	read atomic.Int64
	n    int64
}

// xChunk is what xs copies from.
var xChunk = bytes.Repeat([]byte("x"), 32<<10)

// Read fills p with 'x' until n bytes have gone.
func (z *xs) Read(p []byte) (int, error) {
	read := z.read.Load()
	if read >= z.n {
		return 0, io.EOF
	}
	n := copy(p[:min(int64(len(p)), z.n-read)], xChunk)
	z.read.Add(int64(n))
	return n, nil
}

// TestOversizedBodiesNotRead: an anonymous call (of FileService, open to anonymous
// callers: the others' calls are refused before their bodies are read) with a 256
// MiB body is refused without the server reading it all (the socket buffers hold a
// few MiB more than the 2 MiB limit, not 250), and a gzip bomb (64 KiB of 64 MiB)
// is refused without being decompressed to its end (connect-go then cannot tell
// its size); gzipped calls within the limit still work.
func TestOversizedBodiesNotRead(t *testing.T) {
	e := newEnv(t)
	body := &xs{n: 256 << 20}
	r, _ := http.NewRequest("POST", e.base+"/coffer.admin.v1.FileService/GetFile", io.MultiReader(strings.NewReader(`{"id":"`), body))
	r.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(r); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "resource_exhausted") {
			t.Errorf("256 MiB body: %d %s", resp.StatusCode, b)
		}
	}
	if read := body.read.Load(); read > 64<<20 {
		t.Errorf("the server read %d MiB of an anonymous 256 MiB body", read>>20)
	}
	var bomb bytes.Buffer
	zw := gzip.NewWriter(&bomb)
	_, _ = io.Copy(zw, io.MultiReader(strings.NewReader(`{"id":"`), &xs{n: 64 << 20}))
	_ = zw.Close()
	r, _ = http.NewRequest("POST", e.base+"/coffer.admin.v1.FileService/GetFile", &bomb)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Content-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(r)
	check(t, "gzip bomb", err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// connect-go says "unable to determine message size" when it could not read the
	// message to its end; "message size 67108871" would mean it did.
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(b), "unable to determine message size") {
		t.Errorf("gzip bomb: %d %s", resp.StatusCode, b)
	}
	c := e.clients(asAdmin(), connect.WithSendGzip())
	_, err = c.rules.ValidateRules(ctx(), req(&adminv1.ValidateRulesRequest{Document: testRules + strings.Repeat("# a comment\n", 1000)}))
	check(t, "gzipped ValidateRules", err)
}
