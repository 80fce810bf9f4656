package hasura_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// h2cClient speaks only HTTP/2 without TLS (prior knowledge), as a proxy in front of
// coffer would.
func h2cClient() *http.Client {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: tr}
}

// With h2c, uploads and downloads work over HTTP/2 streams multiplexed on one
// connection, whole, ranged, conditional and HEAD, for files served from memory (3 KB,
// and 10 KB: above the size whose header write HTTP/1.1 batches), from kept-open files
// (100 KB) and from the store (2 MB), while HTTP/1.1 keeps working on the same port.
// Run under -race (scripts/test.sh does): HTTP/1.1's batched header write must not
// touch a connection that HTTP/2 writes from its own goroutine (without the check in
// httpserve.ConnOf, the race detector fails this test).
func TestH2C(t *testing.T) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules, h2c: true})
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv"}`), true), http.StatusCreated, nil)
	alice := "Bearer " + token(t, "user", "alice")
	c := h2cClient()
	defer c.CloseIdleConnections()
	send := func(method, path string, body io.Reader, hdr ...string) (*http.Response, []byte) {
		req, err := http.NewRequest(method, e.srv.URL+path, body)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		req.Header.Set("Authorization", alice)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Error(err)
			return nil, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Error(err)
		}
		if resp.ProtoMajor != 2 {
			t.Errorf("%s %s answered over %s", method, path, resp.Proto)
		}
		return resp, b
	}
	files := map[string][]byte{}
	for _, n := range []int{3 << 10, 10 << 10, 100 << 10, 2 << 20} {
		data := content(n)
		body, ctype := multipartBody(part{field: "bucket-id", body: []byte("priv")}, part{field: "file[]", filename: "f.bin", body: data})
		resp, b := send("POST", "/v1/files", body, "Content-Type", ctype)
		if resp == nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload over h2c: %v %s", resp, b)
		}
		var out uploadResp
		if err := json.Unmarshal(b, &out); err != nil || len(out.ProcessedFiles) != 1 {
			t.Fatalf("upload answer %s: %v", b, err)
		}
		files[out.ProcessedFiles[0].ID] = data
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				for id, data := range files {
					path := "/v1/files/" + id
					switch (g + i) % 4 {
					case 0:
						resp, b := send("GET", path, nil)
						if resp != nil && (resp.StatusCode != 200 || !bytes.Equal(b, data) || resp.Header.Get("Server-Timing") == "") {
							t.Errorf("GET %d bytes: %d, %d bytes back, Server-Timing %q", len(data), resp.StatusCode, len(b), resp.Header.Get("Server-Timing"))
						}
					case 1:
						lo := len(data) / 3
						resp, b := send("GET", path, nil, "Range", fmt.Sprintf("bytes=%d-%d", lo, lo+99))
						if resp != nil && (resp.StatusCode != 206 || !bytes.Equal(b, data[lo:lo+100])) {
							t.Errorf("range of %d bytes: %d, %q", len(data), resp.StatusCode, b)
						}
					case 2:
						resp, _ := send("HEAD", path, nil)
						if resp != nil && (resp.StatusCode != 200 || resp.ContentLength != int64(len(data))) {
							t.Errorf("HEAD of %d bytes: %d, length %d", len(data), resp.StatusCode, resp.ContentLength)
						}
					case 3:
						resp, _ := send("GET", path, nil)
						if resp == nil {
							continue
						}
						resp, b := send("GET", path, nil, "If-None-Match", resp.Header.Get("Etag"))
						if resp != nil && (resp.StatusCode != 304 || len(b) != 0) {
							t.Errorf("conditional GET of %d bytes: %d, %d bytes", len(data), resp.StatusCode, len(b))
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	// HTTP/1.1 on the same port, with its batched writes.
	for id, data := range files {
		resp := e.do("GET", "/v1/files/"+id, nil, false, "Authorization", alice)
		if b := mustStatus(t, resp, http.StatusOK, nil); resp.ProtoMajor != 1 || !bytes.Equal(b, data) {
			t.Errorf("HTTP/1.1 GET of %d bytes: %s, %d bytes", len(data), resp.Proto, len(b))
		}
	}
}

// Without h2c, an HTTP/2-only client gets no answer: the flag is what turns it on.
func TestH2COff(t *testing.T) {
	e := newEnv(t)
	c := h2cClient()
	defer c.CloseIdleConnections()
	resp, err := c.Get(e.srv.URL + "/healthz")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP/2 without TLS answered %s %d with h2c off", resp.Proto, resp.StatusCode)
	}
}
