package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"testing"

	"github.com/coffer/coffer/internal/pgtest"
)

const adminSecret = "app-test-admin-secret"

// start runs the whole server as `coffer serve` would, on 127.0.0.1, and returns its
// base URL; the server stops and closes when the test ends, which must go cleanly.
func start(t *testing.T, c Config) string {
	t.Helper()
	var stop func() error
	m, err := New(context.Background(), c, Parts{}, discard())
	if err == nil {
		stop, err = m.Start() // closes m if it fails
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return "http://" + m.Addr().String()
}

// testPNG returns a w x h PNG.
func testPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i)
	}
	img.Set(0, 0, color.White)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// upload stores content in the default bucket as the admin and returns its id.
func upload(t *testing.T, base string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("file[]", "pic.png")
	fw.Write(content)
	mw.Close()
	resp := send(t, "POST", base+"/v1/files", &body, "Content-Type", mw.FormDataContentType())
	b := readAll(t, resp, http.StatusCreated)
	var out struct {
		ProcessedFiles []struct{ ID string } `json:"processedFiles"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.ProcessedFiles) != 1 {
		t.Fatalf("upload answer %s: %v", b, err)
	}
	return out.ProcessedFiles[0].ID
}

// send makes an admin request with the header pairs hdr.
func send(t *testing.T, method, url string, body io.Reader, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readAll returns the body of resp, failing unless its status is want.
func readAll(t *testing.T, resp *http.Response, want int) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != want {
		t.Fatalf("%s %s: %d (%v), want %d: %s", resp.Request.Method, resp.Request.URL, resp.StatusCode, err, want, b)
	}
	return b
}

// The production wiring on SQLite and disk: upload, download (whole and a range),
// transform through the coffer-imager child (501 without libvips), metrics, and a
// clean stop.
func TestWalkthrough(t *testing.T) {
	walkthrough(t, testConfig(t))
}

// The same on PostgreSQL (a fresh schema, with the cross-node invalidation bus) and
// S3 (a fresh bucket), from the servers scripts/test-services.sh starts.
func TestWalkthroughPostgresS3(t *testing.T) {
	db := pgtest.FreshSchema(t, pgtest.DatabaseURL(t))
	walkthrough(t, testConfig(t, func(c *Config) {
		c.DatabaseURL = db
		useTestS3(t, c)
	}))
}

// useTestS3 points c at a fresh bucket of the S3 server the test scripts start,
// skipping the test without one (failing with COFFER_TEST_REQUIRE_SERVICES=1).
func useTestS3(t *testing.T, c *Config) {
	t.Helper()
	var r [6]byte
	rand.Read(r[:])
	c.S3Endpoint, c.S3Bucket = os.Getenv("COFFER_TEST_S3_ENDPOINT"), "coffer-app-"+hex.EncodeToString(r[:])
	c.S3AccessKey, c.S3SecretKey = os.Getenv("COFFER_TEST_S3_ACCESS_KEY"), os.Getenv("COFFER_TEST_S3_SECRET_KEY")
	switch {
	case c.S3Endpoint != "":
		return
	case os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1":
		t.Fatal("COFFER_TEST_S3_ENDPOINT is required with COFFER_TEST_REQUIRE_SERVICES=1")
	}
	t.Skip("no S3 test server (source scripts/test-services.sh)")
}

// walkthrough starts the server configured by c, with the admin secret and the
// built image worker, and uses it as a client would.
func walkthrough(t *testing.T, c Config) {
	c.AdminSecret, c.ImageWorker = adminSecret, imager
	if imager == "" {
		t.Setenv("PATH", t.TempDir())
	}
	base := start(t, c)
	pic := testPNG(t, 64, 48)
	id := upload(t, base, pic)
	if got := readAll(t, send(t, "GET", base+"/v1/files/"+id, nil), http.StatusOK); !bytes.Equal(got, pic) {
		t.Fatalf("download: %d bytes, want the %d uploaded", len(got), len(pic))
	}
	if got := readAll(t, send(t, "GET", base+"/v1/files/"+id, nil, "Range", "bytes=1-3"), http.StatusPartialContent); !bytes.Equal(got, pic[1:4]) {
		t.Fatalf("range: %q, want %q", got, pic[1:4])
	}
	t.Logf("transforming with %q", imager)
	transform := send(t, "GET", base+"/v1/files/"+id+"?w=16&f=png", nil)
	if imager == "" {
		readAll(t, transform, http.StatusNotImplemented)
	} else {
		img, err := png.Decode(bytes.NewReader(readAll(t, transform, http.StatusOK)))
		if err != nil {
			t.Fatalf("transform w=16: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 16 || b.Dy() != 12 {
			t.Fatalf("transform w=16: %v, want 16x12", b)
		}
	}
	metrics := readAll(t, send(t, "GET", base+"/metrics", nil), http.StatusOK)
	if !bytes.Contains(metrics, []byte("coffer_")) {
		t.Fatalf("metrics without coffer_ series:\n%.500s", metrics)
	}
}
