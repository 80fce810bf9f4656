package e2e

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentReplacesE2E replaces one file from three clients at once, round after
// round, without preconditions (hasura-storage: last writer wins): every answer must
// be 200 and describe a whole upload, and the stored file must be one of the round's
// uploads, byte for byte. COFFER_E2E_REPLACE_ROUNDS sets the rounds (default 100).
func TestConcurrentReplacesE2E(t *testing.T) {
	rounds := 100
	if v, err := strconv.Atoi(os.Getenv("COFFER_E2E_REPLACE_ROUNDS")); err == nil && v > 0 {
		rounds = v
	}
	t.Run("sqlite", func(t *testing.T) {
		concurrentReplaces(t, start(t, "COFFER_DATA_DIR="+t.TempDir()), rounds)
	})
	t.Run("postgres+s3", func(t *testing.T) {
		concurrentReplaces(t, start(t, append(scaleEnv(t), "COFFER_DATA_DIR="+t.TempDir())...), rounds)
	})
}

func concurrentReplaces(t *testing.T, p *proc, rounds int) {
	f, err := p.uploadStream(context.Background(), "race.bin", bytes.NewReader([]byte("v0")))
	if err != nil {
		t.Fatal(err)
	}
	failures := 0
	for round := range rounds {
		sums := map[string]bool{}
		var mu sync.Mutex
		var wg sync.WaitGroup
		for w := range 3 {
			content := bytes.Repeat([]byte(fmt.Sprintf("round %d writer %d;", round, w)), 2000+w*300)
			sum := md5.Sum(content)
			sums[`"`+hex.EncodeToString(sum[:])+`"`] = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, body := p.replace(f.ID, "race.bin", content)
				mu.Lock()
				defer mu.Unlock()
				if status != http.StatusOK {
					failures++
					t.Errorf("round %d writer %d: %d %s", round, w, status, body)
				}
			}()
		}
		wg.Wait()
		etag, size := p.downloadMD5(f.ID)
		if !sums[etag] {
			t.Fatalf("round %d: stored file (md5 %s, %d bytes) is none of the round's uploads", round, etag, size)
		}
	}
	t.Logf("%d rounds x 3 concurrent replaces: %d non-2xx answers", rounds, failures)
}

// replace sends PUT /v1/files/{id} with content as the "file" part.
func (p *proc) replace(id, name string, content []byte) (int, string) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(content)
	mw.Close()
	resp, err := p.request(context.Background(), "PUT", "/v1/files/"+id, &buf, "Content-Type", mw.FormDataContentType())
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
