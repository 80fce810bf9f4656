package hasura_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hotEnv starts a server with JWT and the owner rule and a private bucket "priv".
func hotEnv(t *testing.T) (*env, string) {
	e := newEnv(t, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	mustStatus(t, e.do("POST", "/v1/buckets", strings.NewReader(`{"id":"priv"}`), true), http.StatusCreated, nil)
	return e, "Bearer " + token(t, "user", "alice")
}

// uploadData uploads data into bucket with the Authorization header auth.
func (e *env) uploadData(auth, bucket string, data []byte) string {
	e.t.Helper()
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte(bucket)}, part{field: "file[]", filename: "f.bin", body: data})
	var out uploadResp
	mustStatus(e.t, e.do("POST", "/v1/files", body, false, "Content-Type", ctype, "Authorization", auth), http.StatusCreated, &out)
	return out.ProcessedFiles[0].ID
}

// TestCachedGetTouchesNothing: once a file is cached, repeated authorized GETs (whole,
// ranged, conditional) make no database query and no blob-store call.
func TestCachedGetTouchesNothing(t *testing.T) {
	e, alice := hotEnv(t)
	data := content(100 << 10)
	id := e.uploadData(alice, "priv", data)
	path := "/v1/files/" + id
	resp := e.do("GET", path, nil, false, "Authorization", alice) // warms the caches
	etag := resp.Header.Get("Etag")
	mustStatus(t, resp, http.StatusOK, nil)
	queries, blobCalls := e.db.Total(), e.blobs.Calls()
	for range 10 {
		resp := e.do("GET", path, nil, false, "Authorization", alice)
		timingHdr := resp.Header.Get("Server-Timing")
		if b := mustStatus(t, resp, http.StatusOK, nil); !bytes.Equal(b, data) {
			t.Fatal("cached body differs")
		}
		for _, want := range []string{"auth;dur=", "meta;dur=", "rules;dur=", `blob-open;dur=`, `desc="memory"`, "app;dur="} {
			if !strings.Contains(timingHdr, want) {
				t.Fatalf("Server-Timing %q lacks %q", timingHdr, want)
			}
		}
	}
	resp = e.do("GET", path, nil, false, "Authorization", alice, "Range", "bytes=10-19")
	if b := mustStatus(t, resp, http.StatusPartialContent, nil); !bytes.Equal(b, data[10:20]) {
		t.Fatalf("range from cache: %q", b)
	}
	mustStatus(t, e.do("GET", path, nil, false, "Authorization", alice, "If-None-Match", etag), http.StatusNotModified, nil)
	mustStatus(t, e.do("HEAD", path, nil, false, "Authorization", alice), http.StatusOK, nil)
	if q, c := e.db.Total()-queries, e.blobs.Calls()-blobCalls; q != 0 || c != 0 {
		t.Fatalf("13 cached requests made %d database queries and %d blob calls, want 0 and 0", q, c)
	}
	// A change through this node is seen at once.
	mustStatus(t, e.do("DELETE", path, nil, true), http.StatusNoContent, nil)
	mustError(t, e.do("GET", path, nil, false, "Authorization", alice), http.StatusNotFound)
}

// Files above the content cache's limit stream from the blob store every time.
func TestLargeFilesStream(t *testing.T) {
	e, alice := hotEnv(t)
	data := content(2 << 20)
	id := e.uploadData(alice, "priv", data)
	for i := range 2 {
		calls := e.blobs.Calls()
		resp := e.do("GET", "/v1/files/"+id, nil, false, "Authorization", alice)
		timingHdr := resp.Header.Get("Server-Timing")
		if b := mustStatus(t, resp, http.StatusOK, nil); !bytes.Equal(b, data) {
			t.Fatal("body differs")
		}
		if e.blobs.Calls() == calls || !strings.Contains(timingHdr, `desc="store"`) {
			t.Fatalf("GET %d of a 2 MB file: no blob call, or Server-Timing %q", i, timingHdr)
		}
	}
}

// Replacing a file changes what a cached GET serves.
func TestReplaceSeenThroughCache(t *testing.T) {
	e, alice := hotEnv(t)
	id := e.uploadData(alice, "priv", []byte("old contents"))
	path := "/v1/files/" + id
	mustStatus(t, e.do("GET", path, nil, false, "Authorization", alice), http.StatusOK, nil)
	body, ctype := multipartBody(part{field: "file", filename: "f.bin", body: []byte("new contents")})
	mustStatus(t, e.do("PUT", path, body, false, "Content-Type", ctype, "Authorization", alice), http.StatusOK, nil)
	if b := mustStatus(t, e.do("GET", path, nil, false, "Authorization", alice), http.StatusOK, nil); string(b) != "new contents" {
		t.Fatalf("after replace: %q", b)
	}
}

func TestMetricsEndpoint(t *testing.T) {
	e, alice := hotEnv(t)
	id := e.uploadData(alice, "priv", []byte("x"))
	for range 3 {
		mustStatus(t, e.do("GET", "/v1/files/"+id, nil, false, "Authorization", alice), http.StatusOK, nil)
	}
	resp := e.do("GET", "/metrics", nil, true)
	body := string(mustStatus(t, resp, http.StatusOK, nil))
	for _, want := range []string{
		`coffer_http_request_duration_seconds_count{method="GET",route="GET /v1/files/{id}",status="200"} 3`,
		`coffer_cache_hits_total{cache="content"} 2`,
		`coffer_cache_misses_total{cache="content"} 1`,
		`coffer_cache_hits_total{cache="file"}`,
		`coffer_db_queries_total{method="GetFile"}`,
		`coffer_blob_calls_total`,
		`coffer_http_requests_in_flight 1`, // this request
		`coffer_http_response_body_bytes_total`,
		`go_goroutines`,
		`process_resident_memory_bytes`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if t.Failed() {
		fmt.Println(body)
	}
}

// Every response carries Server-Timing, errors included.
func TestServerTimingOnErrors(t *testing.T) {
	e, _ := hotEnv(t)
	for _, c := range []struct {
		path string
		hdr  []string
	}{
		{"/v1/files/00000000-0000-0000-0000-000000000000", nil},
		{"/nope", nil},
		{"/v1/files/x", []string{"Authorization", "Bearer bad"}},
	} {
		resp := e.do("GET", c.path, nil, false, c.hdr...)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if h := resp.Header.Get("Server-Timing"); !strings.Contains(h, "auth;dur=") {
			t.Errorf("GET %s (%d): Server-Timing %q", c.path, resp.StatusCode, h)
		}
	}
}

// A client that stops sending its upload body is cut off after the idle timeout
// instead of holding a connection and a goroutine.
func TestStalledUploadCutOff(t *testing.T) {
	e := newEnv(t, envOptions{readIdle: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", e.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/files HTTP/1.1\r\nHost: x\r\nX-Hasura-Admin-Secret: %s\r\n"+
		"Content-Type: multipart/form-data; boundary=X\r\nContent-Length: 100000\r\n\r\n--X\r\n", adminSecret)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	answer, err := io.ReadAll(conn) // the server answers 408 and closes the connection
	if err != nil {
		t.Fatalf("server kept the stalled connection open: %v after %v", err, time.Since(start))
	}
	if !bytes.HasPrefix(answer, []byte("HTTP/1.1 408 ")) {
		t.Errorf("a stalled upload's answer: %.80q, want 408", answer)
	}
}

// Cached files below, at and above the size from which the content cache keeps them
// open (and the server sends them with sendfile) come back whole and by range, on
// the first GET and from the cache.
func TestCachedFileSizes(t *testing.T) {
	e, alice := hotEnv(t)
	for _, size := range []int{16<<10 - 1, 16 << 10, 100<<10 + 7, 900 << 10} {
		data := content(size)
		path := "/v1/files/" + e.uploadData(alice, "priv", data)
		for i := range 3 {
			if b := mustStatus(t, e.do("GET", path, nil, false, "Authorization", alice), http.StatusOK, nil); !bytes.Equal(b, data) {
				t.Fatalf("size %d, GET %d: body differs (%d bytes)", size, i, len(b))
			}
		}
		resp := e.do("GET", path, nil, false, "Authorization", alice, "Range", "bytes=9000-")
		if b := mustStatus(t, resp, http.StatusPartialContent, nil); !bytes.Equal(b, data[9000:]) {
			t.Fatalf("size %d: range differs", size)
		}
		resp = e.do("GET", path, nil, false, "Authorization", alice, "Range", "bytes=0-1,5-6")
		if b := mustStatus(t, resp, http.StatusPartialContent, nil); !bytes.Contains(b, data[5:7]) {
			t.Fatalf("size %d: multipart range lacks its parts", size)
		}
	}
}

// trickle is a body that arrives slowly: n pieces, one every gap.
type trickle struct {
	pieces [][]byte
	gap    time.Duration
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.pieces) == 0 {
		return 0, io.EOF
	}
	time.Sleep(t.gap)
	n := copy(p, t.pieces[0])
	if t.pieces[0] = t.pieces[0][n:]; len(t.pieces[0]) == 0 {
		t.pieces = t.pieces[1:]
	}
	return n, nil
}

// An upload whose body takes longer than the write timeout to arrive (a slow link,
// not a stalled one) still gets its answer, over HTTP/1.1 and HTTP/2: the write
// deadline counts from the response, not from the request. Otherwise the file is
// committed but the client sees a broken connection and may upload it again.
func TestSlowUploadGetsItsAnswer(t *testing.T) {
	e := newEnv(t, envOptions{writeTime: 300 * time.Millisecond, h2c: true})
	for _, c := range []*http.Client{e.srv.Client(), h2cClient()} {
		body, ctype := multipartBody(part{field: "file[]", filename: "slow.bin", body: content(5000)})
		raw := body.Bytes()
		var pieces [][]byte
		for i := 0; i < len(raw); i += len(raw)/6 + 1 {
			pieces = append(pieces, raw[i:min(i+len(raw)/6+1, len(raw))])
		}
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/files", &trickle{pieces: pieces, gap: 150 * time.Millisecond})
		req.ContentLength = int64(len(raw))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
		start := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("upload over %v: %v", time.Since(start), err)
		}
		var out uploadResp
		mustStatus(t, resp, http.StatusCreated, &out)
		if resp.ProtoMajor == 1 && time.Since(start) < 600*time.Millisecond {
			t.Fatalf("the body arrived in %v: not slower than the write timeout", time.Since(start))
		}
	}
}

// GETs racing with replacements of the file, in memory (3 KB) and kept open (40 KB):
// every answer is one whole version (whole or ranged), never an older version than
// the last replacement that finished, and never an error. A GET that read the row
// before a replacement finds the old blob deleted; it must read the row again, not
// answer 404 (or 500).
func TestGetDuringReplace(t *testing.T) {
	e := newEnv(t)
	for _, size := range []int{3000, 40000} {
		version := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, size) }
		path := "/v1/files/" + e.uploadOne("default", "x.bin", version(0)).ID
		var latest atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					atLeast := latest.Load()
					req, _ := http.NewRequest("GET", e.srv.URL+path, nil)
					req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
					if g%2 == 1 {
						req.Header.Set("Range", "bytes=100-")
					}
					resp, err := e.srv.Client().Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 && resp.StatusCode != 206 {
						t.Errorf("size %d: GET during a replace answered %d %s", size, resp.StatusCode, b)
						return
					}
					v := int64(b[0] - 'a')
					if len(bytes.Trim(b, string(b[:1]))) != 0 || v < atLeast {
						t.Errorf("size %d: version %d (mixed: %v) after version %d was in place", size, v, len(bytes.Trim(b, string(b[:1]))) != 0, atLeast)
						return
					}
				}
			}()
		}
		for i := 1; i < 26; i++ {
			body, ctype := multipartBody(part{field: "file", filename: "f.bin", body: version(i)})
			mustStatus(t, e.do("PUT", path, body, true, "Content-Type", ctype), http.StatusOK, nil)
			latest.Store(int64(i))
		}
		close(stop)
		wg.Wait()
	}
}
