package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// canaryScript is what every payload runs if a browser lets it: it marks the window,
// its title and its parent, and sends a beacon to the test's canary server.
const canaryScript = `document.title='pwned';window.__pwned=1;` +
	`try{parent.postMessage('pwned','*')}catch(e){};try{navigator.sendBeacon('%s')}catch(e){}`

// browserPayloads are uploads that run canaryScript when rendered as a document.
func browserPayloads(beacon string) []struct{ name, ctype, body string } {
	js := fmt.Sprintf(canaryScript, beacon)
	html := "<!DOCTYPE html><html><head><title>t</title></head><body><script>" + js + "</script>" +
		`<img src="x" onerror="` + js + `"></body></html>`
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="` + js + `"><script>` + js + `</script></svg>`
	xhtml := `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>t</title></head><body><script>` +
		js + `</script></body></html>`
	return []struct{ name, ctype, body string }{
		{"html-as-png.png", "image/png", html},
		{"svg-script.svg", "image/svg+xml", svg},
		{"svg-undeclared.svg", "", svg}, // sniffed as text/xml, which Chromium renders as SVG
		{"page.html", "text/html", html},
		{"page-octet.html", "application/octet-stream", html}, // sniffed as text/html
		{"page.xhtml", "application/xhtml+xml", xhtml},
	}
}

// canary counts beacons and serves the control pages: a payload served without
// coffer's headers, and a frame page embedding any URL.
type canary struct {
	srv   *httptest.Server
	hits  atomic.Int64
	pages map[string]string // path -> HTML body of control payloads
}

func newCanary(t *testing.T) *canary {
	c := &canary{pages: map[string]string{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/beacon":
			c.hits.Add(1)
		case r.URL.Path == "/frame":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!DOCTYPE html><title>frame</title><script>addEventListener('message',function(e){`+
				`if(e.data==='pwned')document.title='pwned'})</script><iframe src="%s"></iframe>`,
				strings.ReplaceAll(r.URL.Query().Get("src"), `"`, "&quot;"))
		case c.pages[r.URL.Path] != "":
			w.Header().Set("Content-Type", r.URL.Query().Get("type"))
			io.WriteString(w, c.pages[r.URL.Path])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// chromiumPath finds Debian's chromium; without it the test skips, except under CI
// (CI=true) or COFFER_TEST_REQUIRE_SERVICES, where it fails: scripts/test.sh installs it.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" || os.Getenv("COFFER_TEST_REQUIRE_SERVICES") != "" {
		t.Fatal("chromium is required (scripts/test.sh installs Debian's chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium; scripts/test.sh does)")
	return ""
}

// newBrowser starts headless Chromium that resolves no host name and reaches only
// loopback, and returns a context for it that ends within limit.
func newBrowser(t *testing.T, limit time.Duration) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", "new"), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("metrics-recording-only", true), chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true), chromedp.Flag("no-pings", true),
	}
	ctx, cancelTime := context.WithTimeout(context.Background(), limit)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelBrowser(); cancelAlloc(); cancelTime() })
	// Downloads (attachment, application/octet-stream) are refused, not written.
	_, err := chromedp.CallBrowser(bctx, browser.SetDownloadBehavior,
		browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorDeny})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// pwned opens url in a new tab and reports whether the canary script ran there: the
// page's title or window mark (a frame page's title, set by the frame's message). A
// navigation Chromium aborts (a refused download) rendered nothing: not pwned.
func pwned(t *testing.T, bctx context.Context, url string) bool {
	t.Helper()
	tab, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancelNav := context.WithTimeout(tab, 20*time.Second)
	defer cancelNav()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		if strings.Contains(err.Error(), "ERR_ABORTED") {
			return false
		}
		t.Fatalf("navigate %s: %v", url, err)
	}
	var ran bool
	deadline := time.Now().Add(500 * time.Millisecond) // a frame's message arrives after load
	for !ran && time.Now().Before(deadline) {
		var err error
		ran, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.title==='pwned'||window.__pwned===1`))
		if err != nil {
			t.Fatalf("evaluate on %s: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return ran
}

// uploadDeclared uploads body as name into bucket with the part's Content-Type ctype.
func (p *proc) uploadDeclared(bucket, name, ctype, body string) string {
	p.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("bucket-id", bucket)
	h := textproto.MIMEHeader{"Content-Disposition": {fmt.Sprintf(`form-data; name="file[]"; filename=%q`, name)}}
	if ctype != "" {
		h.Set("Content-Type", ctype)
	}
	w, _ := mw.CreatePart(h)
	io.WriteString(w, body)
	mw.Close()
	resp, err := p.request(context.Background(), "POST", "/v1/files", &buf, "Content-Type", mw.FormDataContentType())
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ ProcessedFiles []fileMeta }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 201 || len(out.ProcessedFiles) != 1 {
		p.t.Fatalf("upload %s: %d %v", name, resp.StatusCode, err)
	}
	return out.ProcessedFiles[0].ID
}

// presigned returns a presigned URL of file id.
func (p *proc) presigned(id string) string {
	p.t.Helper()
	resp, err := p.request(context.Background(), "GET", "/v1/files/"+id+"/presignedurl", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ URL string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.URL == "" {
		p.t.Fatalf("presign %s: %d %v", id, resp.StatusCode, err)
	}
	return out.URL
}

// TestInlineScriptsDoNotRun: uploads that carry script (HTML declared as image/png,
// SVG with <script>, HTML, XHTML) in a public allowInline bucket, opened in headless
// Chromium directly, through presigned URLs and framed by another origin, run none of
// it, while the same payloads served by the test's own server do (issue 15, D10).
func TestInlineScriptsDoNotRun(t *testing.T) {
	bctx := newBrowser(t, 3*time.Minute)
	c := newCanary(t)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	p.adminDo("POST", "/v1/buckets", `{"id":"inline","allowInline":true,"public":true,"presignedUrlsEnabled":true}`, 201)
	payloads := browserPayloads(c.srv.URL + "/beacon")

	// Control: the canary works, so the checks below can fail.
	c.pages["/control.html"], c.pages["/control.svg"] = payloads[0].body, payloads[1].body
	for _, u := range []string{c.srv.URL + "/control.html?type=text/html", c.srv.URL + "/control.svg?type=image/svg%2Bxml",
		c.srv.URL + "/frame?src=" + c.srv.URL + "/control.html%3Ftype%3Dtext/html"} {
		if !pwned(t, bctx, u) {
			t.Fatalf("control %s: the canary script did not run; the test could not see an XSS", u)
		}
	}
	before := c.hits.Load()
	if before == 0 {
		t.Fatal("control pages sent no beacon")
	}

	for _, pl := range payloads {
		id := p.uploadDeclared("inline", pl.name, pl.ctype, pl.body)
		direct := p.url + "/v1/files/" + id
		for _, u := range []string{direct, p.presigned(id), c.srv.URL + "/frame?src=" + direct} {
			if pwned(t, bctx, u) {
				t.Errorf("%s (declared %q): script ran at %s", pl.name, pl.ctype, u)
			}
		}
	}
	time.Sleep(500 * time.Millisecond) // beacons are sent asynchronously
	if n := c.hits.Load() - before; n != 0 {
		t.Errorf("coffer's pages sent %d beacons", n)
	}
	if t.Failed() {
		t.Logf("coffer logs:\n%s", tail(p.logs.String(), 4000))
	}
}
