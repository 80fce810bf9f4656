package httpapi_test

// Behaviours of hasura-storage that Nhost clients can tell apart, one test each
// (issue 14). Each test names the behaviour it pins.

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
)

// Concurrent replaces of one file without a precondition all succeed; the last to
// commit wins and the stored file is one of the uploads, whole.
func TestCompatConcurrentReplaces(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "race.bin", []byte("first"))
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	for round := range rounds {
		var wg sync.WaitGroup
		sums := map[[16]byte]bool{}
		errs := make(chan string, 3)
		for i := range 3 {
			content := bytes.Repeat([]byte(fmt.Sprintf("r%d-w%d|", round, i)), 4096+i*100)
			sums[md5.Sum(content)] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				body, ctype := multipartBody(part{field: "file", filename: "race.bin", body: content})
				req, _ := http.NewRequest("PUT", e.srv.URL+"/v1/files/"+f.ID, body)
				req.Header.Set("Content-Type", ctype)
				req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
				resp, err := e.srv.Client().Do(req)
				if err != nil {
					errs <- err.Error()
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Sprintf("status %d: %s", resp.StatusCode, b)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for msg := range errs {
			t.Fatalf("round %d: replace failed: %s", round, msg)
		}
		resp := e.do("GET", "/v1/files/"+f.ID, nil, true)
		got := mustStatus(t, resp, http.StatusOK, nil)
		if !sums[md5.Sum(got)] {
			t.Fatalf("round %d: stored file (%d bytes) is none of the uploads", round, len(got))
		}
	}
}
