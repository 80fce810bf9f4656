package hasura_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// BenchmarkUpload measures POST /v1/files of one file through the real handler over
// loopback HTTP (SQLite metadata, disk blobs, fsync), each new file deleted untimed.
// The 32 MiB case (under the default bucket's 50 MB limit) shows the per-byte cost (CPU and allocations of streaming, hashing
// and writing); the 100 KB case the per-request cost.
func BenchmarkUpload(b *testing.B) {
	for _, c := range []struct {
		name string
		size int
	}{{"100KB", 100_000}, {"32MiB", 32 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			e := newEnv(b)
			body, ctype := multipartBody(part{field: "bucket-id", body: []byte("default")},
				part{field: "file[]", filename: "bench.bin", body: content(c.size)})
			raw := body.Bytes()
			b.SetBytes(int64(c.size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				id := benchPost(b, e, raw, ctype)
				b.StopTimer()
				benchDelete(b, e, id)
				b.StartTimer()
			}
		})
	}
}

// benchPost uploads one multipart body as admin and returns the new file's id.
func benchPost(b *testing.B, e *env, raw []byte, ctype string) string {
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/files", bytes.NewReader(raw))
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	resp, err := e.srv.client.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		b.Fatalf("upload: %v %v", err, resp)
	}
	var out uploadResp
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || len(out.ProcessedFiles) != 1 {
		b.Fatalf("upload answer: %v %+v", err, out)
	}
	return out.ProcessedFiles[0].ID
}

// benchDelete deletes file id as admin.
func benchDelete(b *testing.B, e *env, id string) {
	req, _ := http.NewRequest("DELETE", e.srv.URL+"/v1/files/"+id, nil)
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	resp, err := e.srv.client.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		b.Fatalf("delete: %v %v", err, resp)
	}
	resp.Body.Close()
}
