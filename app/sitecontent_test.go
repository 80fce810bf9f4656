package app

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/andybalholm/brotli"

	"github.com/coffer/coffer"
)

// TestSiteContentOfWritableBuckets: anonymous users may upload into bucket
// "default" (not "adm"). A site serves default's HTML with the /v1 sandbox and
// never the anonymous user's p.html.br for the admin's p.html; adm's files as they
// are, siblings included. An HTTP origin's header leaves no answer, and the answer
// sent back as an update keeps it.
func TestSiteContentOfWritableBuckets(t *testing.T) {
	rules := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n  - role: public\n    buckets: [default]\n    upload: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // no coffer-imager
	base := start(t, testConfig(t, func(c *Config) {
		c.AdminSecret, c.RulesFile, c.Webhooks.AllowNetworks = adminSecret, rules, []string{"127.0.0.0/8"}
	}))
	readAll(t, send(t, "POST", base+"/v1/buckets", strings.NewReader(`{"id":"adm"}`), "Content-Type", "application/json"), http.StatusCreated)
	page := bytes.Repeat([]byte("<p>the admin's page</p>\n"), 100)
	evil := brotliBytes([]byte("<script>alert('sibling')</script>"))
	for _, b := range []string{"default", "adm"} {
		uploadAs(t, base, true, b, "www/p.html", "text/html", page, http.StatusCreated)
	}
	uploadAs(t, base, false, "default", "www/p.html.br", "application/x-brotli", evil, http.StatusCreated)
	uploadAs(t, base, false, "adm", "www/p.html.br", "application/x-brotli", evil, http.StatusForbidden)
	uploadAs(t, base, true, "adm", "www/p.html.br", "application/x-brotli", evil, http.StatusCreated)

	var mu sync.Mutex
	var auth []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Write([]byte("upstream"))
	}))
	defer origin.Close()
	doc := `{"id":"w","hosts":["w.test"],"routes":[
	  {"path":"/u/*","stripPrefix":"/u","target":{"bucket":{"id":"default","prefix":"www/"}}},
	  {"path":"/a/*","stripPrefix":"/a","target":{"bucket":{"id":"adm","prefix":"www/"}}},
	  {"path":"/o/*","stripPrefix":"/o","target":{"http":{"url":"` + origin.URL + `/","headers":{"Authorization":"Bearer sekrit"}}}}]}`
	created := rpc(t, base, "SiteService/CreateSite", `{"site":`+doc+`}`)
	if strings.Contains(created, "sekrit") || !strings.Contains(created, `"headersSet":["Authorization"]`) {
		t.Fatalf("CreateSite answered %s", created)
	}

	for _, c := range []struct {
		path    string
		sibling bool // the sibling's bytes answer
		sandbox bool
	}{{"/u/p.html", false, true}, {"/a/p.html", true, false}} {
		req, _ := http.NewRequest("GET", base+c.path, nil)
		req.Host = "w.test"
		req.Header.Set("Accept-Encoding", "br")
		resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp, http.StatusOK)
		plain, _ := io.ReadAll(brotli.NewReader(bytes.NewReader(body)))
		if used := !bytes.Equal(plain, page); used != c.sibling || resp.Header.Get("Content-Encoding") != "br" {
			t.Errorf("%s: %q, sibling answered %v, want %v", c.path, resp.Header.Get("Content-Encoding"), used, c.sibling)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); (csp == coffer.SandboxCSP) != c.sandbox {
			t.Errorf("%s: Content-Security-Policy %q, want the sandbox %v", c.path, csp, c.sandbox)
		}
	}

	var answer struct{ Site json.RawMessage }
	json.Unmarshal([]byte(rpc(t, base, "SiteService/GetSite", `{"id":"w"}`)), &answer)
	updated := rpc(t, base, "SiteService/UpdateSite", `{"id":"w","site":`+string(answer.Site)+`}`)
	if strings.Contains(updated, "sekrit") {
		t.Fatalf("UpdateSite answered %s", updated)
	}
	req, _ := http.NewRequest("GET", base+"/o/x", nil)
	req.Host = "w.test"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp, http.StatusOK)
	mu.Lock()
	defer mu.Unlock()
	if len(auth) != 1 || auth[0] != "Bearer sekrit" {
		t.Errorf("the origin was sent Authorization %q after the round trip, want the stored one", auth)
	}
}

// uploadAs uploads data named name into bucket as the admin or anonymously, and
// fails unless the answer is want.
func uploadAs(t *testing.T, base string, admin bool, bucket, name, ctype string, data []byte, want int) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField("bucket-id", bucket)
	mw.WriteField("metadata[]", `{"name":"`+name+`"}`)
	fw, _ := mw.CreatePart(textproto.MIMEHeader{"Content-Disposition": {`form-data; name="file[]"; filename="f"`}, "Content-Type": {ctype}})
	fw.Write(data)
	mw.Close()
	req, _ := http.NewRequest("POST", base+"/v1/files", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if admin {
		req.Header.Set("X-Hasura-Admin-Secret", adminSecret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp, want)
}

// rpc calls a management method in Connect JSON as the admin and returns the answer.
func rpc(t *testing.T, base, method, body string) string {
	t.Helper()
	return string(readAll(t, send(t, "POST", base+"/coffer.admin.v1."+method, strings.NewReader(body), "Content-Type", "application/json"), http.StatusOK))
}

// brotliBytes compresses b.
func brotliBytes(b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}
