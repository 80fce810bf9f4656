package e2e

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// The HS256 key of the JWT config the server runs with (Hasura's
// HASURA_GRAPHQL_JWT_SECRET form) and the user the test's token speaks for.
const (
	nhostJWTKey = "nhostjs-e2e-hs256-key-0123456789abcdef"
	nhostUserID = "5b7a5c1e-3f0e-4d8a-9a61-0c2f4e6b8d10"
)

// The user role may upload to "default" and nhostjs (its own id preset) and read,
// replace and delete only what it uploaded; nhostjs-locked has no rule for it.
const nhostRules = `{"rules":[{"role":"user","buckets":["default","nhostjs"],
  "upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
  "read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
  "replace":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
  "delete":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`

var (
	npmOnce sync.Once
	npmErr  error
	npmOut  []byte
)

// nhostjsDir installs the pinned Nhost SDKs (npm ci, once per test binary) and returns
// the directory of the Node project, or skips when Node is not installed.
func nhostjsDir(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") != "" {
				t.Fatalf("%s is required (scripts/test.sh installs it)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
	dir, err := filepath.Abs("nhostjs")
	if err != nil {
		t.Fatal(err)
	}
	npmOnce.Do(func() {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--prefer-offline")
		cmd.Dir = dir
		npmOut, npmErr = cmd.CombinedOutput()
	})
	if npmErr != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, npmErr, npmOut)
	}
	return dir
}

// TestNhostJSSDK runs internal/e2e/nhostjs/run.mjs, which drives the official Nhost
// storage SDKs (@nhost/hasura-storage-js 2.9.0 and @nhost/nhost-js 4.7.0) against the
// built coffer, on SQLite + disk and on PostgreSQL + S3.
func TestNhostJSSDK(t *testing.T) {
	dir := nhostjsDir(t)
	t.Run("sqlite", func(t *testing.T) {
		testNhostJS(t, dir, []string{"COFFER_DATA_DIR=" + t.TempDir()})
	})
	t.Run("postgres+s3", func(t *testing.T) {
		testNhostJS(t, dir, append(scaleEnv(t), "COFFER_DATA_DIR="+t.TempDir()))
	})
}

func testNhostJS(t *testing.T, dir string, env []string) {
	p := start(t, append(env, `COFFER_JWT_SECRET={"type":"HS256","key":"`+nhostJWTKey+`"}`)...)
	p.adminDo("POST", "/v1/buckets", `{"id":"nhostjs","presignedUrlsEnabled":true,"downloadExpiration":60}`, http.StatusCreated)
	p.adminDo("POST", "/v1/buckets", `{"id":"nhostjs-locked"}`, http.StatusCreated)
	p.adminDo("PUT", "/v1/rules", nhostRules, http.StatusOK)

	jpegPath := filepath.Join(t.TempDir(), "photo.jpg")
	if err := os.WriteFile(jpegPath, testJPEG(t, 400, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	images := "on"
	if imager == "" {
		images = "off"
		t.Log("libvips is not installed (no coffer-imager): image transformation cases are skipped")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "run.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"COFFER_URL="+p.url, "ADMIN_SECRET="+adminSecret,
		"USER_JWT="+userJWT(t), "USER_ID="+nhostUserID,
		"BUCKET=nhostjs", "BUCKET_EXPIRATION=60", "LOCKED_BUCKET=nhostjs-locked",
		"JPEG_PATH="+jpegPath, "IMAGES="+images)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node run.mjs: %v\n%s\ncoffer logs (tail):\n%s", err, out, tail(p.logs.String(), 4000))
	}
	t.Logf("node run.mjs:\n%s", out)
}

// userJWT signs an HS256 access token for role user, as Nhost's auth service issues them.
func userJWT(t *testing.T) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": nhostUserID,
		"iat": now.Unix(),
		"exp": now.Add(time.Hour).Unix(),
		"https://hasura.io/jwt/claims": map[string]any{
			"x-hasura-default-role":  "user",
			"x-hasura-allowed-roles": []string{"user", "me"},
			"x-hasura-user-id":       nhostUserID,
		},
	})
	s, err := tok.SignedString([]byte(nhostJWTKey))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// adminDo sends a JSON body with the admin secret and wants status.
func (p *proc) adminDo(method, path, body string, status int) {
	p.t.Helper()
	resp, err := p.request(context.Background(), method, path, strings.NewReader(body), "Content-Type", "application/json")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		p.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	if !json.Valid(b) {
		p.t.Fatalf("%s %s: not JSON: %s", method, path, b)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
