package hasura_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/internal/httpserve"
)

// abortEnv is a server whose logs (debug and up, with the access log of every
// request) the test reads.
func abortEnv(t *testing.T, o envOptions) (*env, *lockedBuffer) {
	logs := &lockedBuffer{}
	o.log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.accessLog = &httpserve.AccessLogConfig{Mode: httpserve.AccessLogOn}
	return newEnv(t, o), logs
}

// awaitLog waits until the logs contain s.
func awaitLog(t *testing.T, logs *lockedBuffer, s string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); logs.count(s) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the logs:\n%s", s, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkClientClosed asserts that the request on path was logged and counted as 499
// (nginx's "client closed request"), never as an error.
func checkClientClosed(t *testing.T, e *env, logs *lockedBuffer, path string) {
	t.Helper()
	awaitLog(t, logs, "path="+path+" status=499")
	if n := logs.count("level=ERROR"); n != 0 {
		t.Errorf("a client that left was logged as an error:\n%s", logs.String())
	}
	if n := logs.count("status=500"); n != 0 {
		t.Errorf("a client that left got a 500:\n%s", logs.String())
	}
	awaitLog(t, logs, "client closed request")
	body := string(mustStatus(t, e.do("GET", "/metrics", nil, true), http.StatusOK, nil))
	if !strings.Contains(body, `status="499"`) {
		t.Errorf("metrics count no 499")
	}
	if strings.Contains(body, `status="500"`) {
		t.Errorf("metrics count a 500")
	}
}

// A client that drops its connection in the middle of an upload's body is counted as
// 499, logged at debug as "client closed request", and leaves nothing stored: no
// file, no blob.
func TestClientAbortedUploadIs499(t *testing.T) {
	e, logs := abortEnv(t, envOptions{})
	conn, err := net.Dial("tcp", e.srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /v1/files HTTP/1.1\r\nHost: x\r\nX-Hasura-Admin-Secret: %s\r\n"+
		"Content-Type: multipart/form-data; boundary=X\r\nContent-Length: 1000000\r\n\r\n"+
		"--X\r\nContent-Disposition: form-data; name=\"file[]\"; filename=\"a.bin\"\r\n"+
		"Content-Type: application/octet-stream\r\n\r\n%s", adminSecret, strings.Repeat("a", 200<<10))
	time.Sleep(100 * time.Millisecond) // the server is reading the body
	conn.Close()
	checkClientClosed(t, e, logs, "/v1/files")
	if files := listFiles(t, e); len(files) != 0 {
		t.Errorf("an aborted upload stored %d files", len(files))
	}
	if blobs := blobFiles(t, e); len(blobs) != 0 {
		t.Errorf("an aborted upload left blobs %v", blobs)
	}
}

// A client that gives up waiting for a transformation is counted as 499, not 500.
func TestClientAbortedTransformIs499(t *testing.T) {
	eng := &waitingEngine{started: make(chan struct{}, 1)}
	e, logs := abortEnv(t, envOptions{engine: eng})
	src := e.uploadOne("default", "p.jpg", photo(t, 64, 48))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/v1/files/"+src.ID+"?w=10", nil)
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	go func() { <-eng.started; cancel() }()
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the cancelled request got an answer: %d", resp.StatusCode)
	}
	checkClientClosed(t, e, logs, "/v1/files/"+src.ID)
}

// waitingEngine works on every transformation until its context ends, as an
// expensive one would, then returns the context's error.
type waitingEngine struct {
	refusingEngine
	started chan struct{}
}

func (e *waitingEngine) Transform(ctx context.Context, _ io.Reader, _ imaging.Options) (*imaging.Result, error) {
	e.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

// listFiles returns the ids of every file, as the admin lists them.
func listFiles(t *testing.T, e *env) []string {
	t.Helper()
	page, err := e.svc.ListFiles(context.Background(), &coffer.Principal{Admin: true}, coffer.ListOptions{BucketID: "default", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(page.Files))
	for i, f := range page.Files {
		ids[i] = f.ID
	}
	return ids
}

// blobFiles returns every regular file under the blob store's directory.
func blobFiles(t *testing.T, e *env) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(e.blobDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			found = append(found, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
