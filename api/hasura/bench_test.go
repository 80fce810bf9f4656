package hasura_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/internal/httpserve"
)

// BenchmarkGetFile100KB measures GET of a 100 KB file through the real handler over
// loopback HTTP (SQLite metadata, disk blob via sendfile), with parallel clients.
func BenchmarkGetFile100KB(b *testing.B) {
	e := newEnv(b)
	admin := []string{"X-Hasura-Admin-Secret", adminSecret}
	data := content(100 << 10)
	id := benchUpload(b, e, "default", "bench.bin", data, admin)
	benchGet(b, e.srv.URL+"/v1/files/"+id, admin, len(data))
}

// BenchmarkGet100KBAccess compares, in one run, GET of a 100 KB file in a public bucket
// without credentials against GET with a JWT checked against an owner rule.
func BenchmarkGet100KBAccess(b *testing.B) {
	e := newEnv(b, envOptions{jwtSecret: jwtConfig, rules: matrixRules})
	benchBucket(b, e, "pub", true)
	benchBucket(b, e, "priv", false)
	auth := []string{"Authorization", "Bearer " + token(nil, "user", "alice")}
	data := content(100 << 10)
	pub, priv := benchUpload(b, e, "pub", "f.bin", data, auth), benchUpload(b, e, "priv", "f.bin", data, auth)
	b.Run("public", func(b *testing.B) { benchGet(b, e.srv.URL+"/v1/files/"+pub, nil, len(data)) })
	b.Run("jwt-owner-rule", func(b *testing.B) { benchGet(b, e.srv.URL+"/v1/files/"+priv, auth, len(data)) })
}

// BenchmarkGet100KBFastPath compares the same GETs as BenchmarkGet100KBAccess served
// by net/http alone (--fast-path=false) and on the HTTP/1.1 fast path. The Go client's
// own allocations are in both.
func BenchmarkGet100KBFastPath(b *testing.B) {
	for _, path := range []string{"net-http", "fast"} {
		e := newEnv(b, envOptions{jwtSecret: jwtConfig, rules: matrixRules, slow: path == "net-http"})
		benchBucket(b, e, "pub", true)
		benchBucket(b, e, "priv", false)
		auth := []string{"Authorization", "Bearer " + token(nil, "user", "alice")}
		data := content(100 << 10)
		pub, priv := benchUpload(b, e, "pub", "f.bin", data, auth), benchUpload(b, e, "priv", "f.bin", data, auth)
		b.Run(path+"/public", func(b *testing.B) { benchGet(b, e.srv.URL+"/v1/files/"+pub, nil, len(data)) })
		b.Run(path+"/jwt-owner-rule", func(b *testing.B) { benchGet(b, e.srv.URL+"/v1/files/"+priv, auth, len(data)) })
	}
}

// BenchmarkGet100KBAccessLog measures the access log on the hot path: a public GET
// of a 100 KB file with the access log off, on for every request, and on with the
// default budget of successful reads per second, each logging JSON to a file as
// `coffer serve 2>file` does.
func BenchmarkGet100KBAccessLog(b *testing.B) {
	modes := map[string]httpserve.AccessLogConfig{
		"off":    {Mode: httpserve.AccessLogOff},
		"every":  {Mode: httpserve.AccessLogOn},
		"budget": hasura.DefaultConfig().AccessLog,
	}
	for _, name := range []string{"off", "every", "budget"} {
		b.Run(name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log.json"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			cfg := modes[name]
			e := newEnv(b, envOptions{log: slog.New(slog.NewJSONHandler(f, nil)), accessLog: &cfg})
			benchBucket(b, e, "pub", true)
			data := content(100 << 10)
			id := benchUpload(b, e, "pub", "f.bin", data, []string{"X-Hasura-Admin-Secret", adminSecret})
			benchGet(b, e.srv.URL+"/v1/files/"+id, nil, len(data))
			if fi, err := f.Stat(); err == nil {
				b.ReportMetric(float64(fi.Size())/float64(b.N), "logB/op")
			}
		})
	}
}

// benchBucket creates a bucket as admin.
func benchBucket(b *testing.B, e *env, id string, public bool) {
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/buckets", strings.NewReader(`{"id":"`+id+`","public":`+fmt.Sprint(public)+`}`))
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		b.Fatalf("create bucket: %v %v", err, resp)
	}
	resp.Body.Close()
}

// benchUpload uploads data into bucket with the given header (name, value) and
// returns the file id.
func benchUpload(b *testing.B, e *env, bucket, name string, data []byte, hdr []string) string {
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte(bucket)}, part{field: "file[]", filename: name, body: data})
	req, _ := http.NewRequest("POST", e.srv.URL+"/v1/files", body)
	req.Header.Set("Content-Type", ctype)
	req.Header.Set(hdr[0], hdr[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 201 {
		b.Fatalf("upload: %v %v", err, resp)
	}
	var out uploadResp
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	return out.ProcessedFiles[0].ID
}

// benchGet GETs url from parallel clients, sending the header hdr (name, value) if
// given, and checks every answer is 200 with size bytes.
func benchGet(b *testing.B, url string, hdr []string, size int) {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		buf := bytes.NewBuffer(make([]byte, 0, size))
		for pb.Next() {
			req, _ := http.NewRequest("GET", url, nil)
			if hdr != nil {
				req.Header.Set(hdr[0], hdr[1])
			}
			resp, err := client.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			buf.Reset()
			n, _ := io.Copy(buf, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || n != int64(size) {
				b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
			}
		}
	})
}

// BenchmarkVariantGet compares GET of a cached image variant (?w=...) with GET of a
// plain file of the same size, both public, through the real handler.
func BenchmarkVariantGet(b *testing.B) {
	e := newEnv(b, envOptions{images: true})
	benchBucket(b, e, "pub", true)
	admin := []string{"X-Hasura-Admin-Secret", adminSecret}
	img := benchUpload(b, e, "pub", "photo.jpg", photo(nil, 2000, 1500), admin)
	variantURL := e.srv.URL + "/v1/files/" + img + "?w=800&b=2"
	resp, err := http.Get(variantURL) // makes and caches the variant
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("variant: %v %v", err, resp)
	}
	variant, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	plain := benchUpload(b, e, "pub", "plain.bin", content(len(variant)), admin)
	b.Run("plain", func(b *testing.B) { benchGet(b, e.srv.URL+"/v1/files/"+plain, nil, len(variant)) })
	b.Run("variant", func(b *testing.B) { benchGet(b, variantURL, nil, len(variant)) })
}
