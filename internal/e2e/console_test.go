package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"
)

// The web console (issue 21) driven in headless Chromium against the built binary.
// Screenshots of each main page go to $COFFER_CONSOLE_SCREENSHOTS, else to a
// temporary directory kept when the test fails; the path is logged.

const consoleJWTKey = "console-e2e-hs256-key-0123456789abcdef"

// consoleRules: role user may upload to photos (its id preset) and read only what
// it uploaded; it has no delete rule, so deleting is refused.
const consoleRules = `rules:
  - role: user
    buckets: [photos]
    upload:
      presets: {uploaded_by_user_id: X-Hasura-User-Id}
    read:
      filter: {uploaded_by_user_id: {_eq: X-Hasura-User-Id}}
`

// consoleJWT signs an HS256 token of role for user id.
func consoleJWT(t *testing.T, role, user string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"sub": user, "iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix(),
		"https://hasura.io/jwt/claims": map[string]any{
			"x-hasura-default-role": role, "x-hasura-allowed-roles": []string{role}, "x-hasura-user-id": user,
		},
	})
	s, err := tok.SignedString([]byte(consoleJWTKey))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// screenshotDir is where this run's screenshots go.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("COFFER_CONSOLE_SCREENSHOTS"); d != "" {
		d = filepath.Join(d, t.Name())
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshots: %s", d)
		return d
	}
	d, err := os.MkdirTemp("", "coffer-console-shots")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("screenshots kept: %s", d)
		} else {
			os.RemoveAll(d)
		}
	})
	t.Logf("screenshots: %s (removed unless the test fails; set COFFER_CONSOLE_SCREENSHOTS to keep them)", d)
	return d
}

// tab is one browser tab on the console, failing the test on any uncaught script
// error.
type tab struct {
	t     *testing.T
	ctx   context.Context
	p     *proc
	shots string
	mu    sync.Mutex
	errs  []string
}

func newTab(t *testing.T, bctx context.Context, p *proc, shots string) *tab {
	tb := &tab{t: t, p: p, shots: shots}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			tb.mu.Lock()
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			tb.errs = append(tb.errs, fmt.Sprintf("%s (%s:%d)", msg, d.URL, d.LineNumber))
			tb.mu.Unlock()
		}
	}))
	t.Cleanup(cancel)
	tb.ctx = ctx
	// The tab lives as long as the context of its first Run: tb.ctx, not a timeout.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	t.Cleanup(tb.checkErrors)
	return tb
}

func (tb *tab) checkErrors() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, e := range tb.errs {
		tb.t.Errorf("uncaught script error in the console: %s", e)
	}
}

// do runs steps within 60 s; on failure it saves a screenshot and fails.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.fail(err)
	}
}

func (tb *tab) fail(err error) {
	tb.t.Helper()
	tb.shot("FAILED")
	body, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ''`))
	tb.t.Fatalf("%v\npage text:\n%s\ncoffer logs (tail):\n%s", err, body, tail(tb.p.logs.String(), 3000))
}

// eval evaluates js (awaiting a promise) and decodes its value into T.
func eval[T any](tb *tab, js string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.fail(fmt.Errorf("evaluate %s: %w", js, err))
	}
	return v
}

// wait waits until the JavaScript expression is truthy.
func (tb *tab) wait(js string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 60*time.Second)
	defer cancel()
	// An element may be missing while the page redraws: that is "not yet", not an error.
	expr := "(()=>{try{return !!(" + js + ")}catch(e){return false}})()"
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(45*time.Second))); err != nil {
		tb.fail(fmt.Errorf("waiting for %s: %w", js, err))
	}
}

// text is the text of the first element matching a CSS selector ("" if none).
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	return eval[string](tb, fmt.Sprintf(`(document.querySelector(%q)||{}).textContent||''`, sel))
}

// shot saves a full-page screenshot as name.png.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(tb.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// goTo opens a console route ("#/files/x") and waits for its main element.
func (tb *tab) goTo(hash, page string) {
	tb.t.Helper()
	tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash=%q`, hash)))
	tb.wait(fmt.Sprintf(`document.getElementById('main').dataset.page===%q`, page))
}

// signIn opens the console and signs in with a credential of kind.
func (tb *tab) signIn(base, kind, value string) {
	tb.t.Helper()
	tb.do(chromedp.Navigate(base+"/console"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	tb.do(chromedp.SetValue(chromedp.CSS("#signin select"), kind), chromedp.SendKeys(chromedp.CSS("#signin input[name=value]"), value),
		chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	tb.wait(`document.getElementById('main').dataset.page!=='signin'`)
}

// setText replaces a field's text as typing would (input events fire).
func (tb *tab) setText(sel, text string) {
	tb.t.Helper()
	tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(()=>{const e=document.querySelector(%q);e.value=%q;`+
		`e.dispatchEvent(new Event('input',{bubbles:true}))})()`, sel, text)))
}

func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do(chromedp.Click(chromedp.CSS(sel)))
}

// clickRow clicks the element sel in the files table's row of the file named name.
func (tb *tab) clickRow(name, sel string) {
	tb.t.Helper()
	tb.wait(fmt.Sprintf(`[...document.querySelectorAll('#files a.file-link')].some(a=>a.textContent===%q)`, name))
	tb.do(chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll('#files a.file-link')].find(a=>a.textContent===%q)`+
		`.closest('tr').querySelector(%q).click()`, name, sel)))
}

// confirm answers the console's confirmation dialog with yes.
func (tb *tab) confirm() {
	tb.t.Helper()
	tb.wait(`document.querySelector('dialog[open] button[data-confirm=yes]')`)
	tb.click(`dialog[open] button[data-confirm=yes]`)
}

// testPNG is a w×h PNG with a gradient.
func testPNG(t *testing.T, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 140, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rpcJSON calls the management API in Connect JSON with headers; it returns the
// status and the decoded answer.
func (p *proc) rpcJSON(method, body string, hdr ...string) (int, map[string]any) {
	p.t.Helper()
	req, _ := http.NewRequest("POST", p.url+"/coffer.admin.v1."+method, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestConsole walks the console as an admin and as a user: sign in, create a
// bucket, upload three files (one of 50 MB, its progress watched), thumbnails,
// rename, metadata, a presigned URL fetched, rules set and a refused action shown
// as refused, delete; the admin pages; a phone-width and a dark screenshot.
func TestConsole(t *testing.T) {
	bctx := newBrowser(t, 8*time.Minute)
	shots := screenshotDir(t)
	dir := t.TempDir()
	p := start(t, "COFFER_DATA_DIR="+filepath.Join(dir, "data"), `COFFER_JWT_SECRET={"type":"HS256","key":"`+consoleJWTKey+`"}`,
		"COFFER_WEBHOOK_ALLOW_NETWORKS=127.0.0.0/8")
	tb := newTab(t, bctx, p, shots)

	// Sign in (a wrong secret first: refused, and said so).
	tb.do(chromedp.Navigate(p.url+"/console"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	tb.shot("01-signin")
	tb.do(chromedp.SendKeys(chromedp.CSS("#signin input[name=value]"), "wrong"), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	tb.wait(`document.getElementById('signin-msg').className.includes('error')`)
	if got := tb.text("#signin-msg"); !strings.Contains(got, "refused this credential") {
		t.Errorf("wrong secret: %q", got)
	}
	tb.signIn(p.url, "admin", adminSecret)
	tb.wait(`document.querySelector('#bucket-list a')`)
	if cookies := eval[string](tb, `document.cookie`); cookies != "" {
		t.Errorf("the console set cookies: %q", cookies)
	}

	// Create a bucket.
	tb.goTo("#/buckets", "buckets")
	tb.click("#main details.card summary")
	tb.do(chromedp.SendKeys(chromedp.CSS("#new-bucket-id"), "photos"), chromedp.Click(chromedp.CSS("#new-bucket button[type=submit]")))
	tb.wait(`document.querySelector('tr[data-bucket="photos"]')`)
	if got := tb.text("#buckets-msg"); !strings.Contains(got, "photos created") {
		t.Errorf("create bucket: %q", got)
	}
	tb.shot("02-buckets")
	// Edit its settings: a download expiration of an hour, a 100 MB limit.
	tb.click(`tr[data-bucket="photos"] details summary`)
	tb.do(chromedp.SetValue(chromedp.CSS(`tr[data-bucket="photos"] input[name=exp]`), "3600"),
		chromedp.SetValue(chromedp.CSS(`tr[data-bucket="photos"] input[name=max]`), "100000000"),
		chromedp.Click(chromedp.CSS(`tr[data-bucket="photos"] form button[type=submit]`)))
	tb.wait(`document.getElementById('buckets-msg').textContent==='Bucket photos saved.'`)
	if st, out := p.rpcJSON("BucketService/GetBucket", `{"id":"photos"}`, "x-hasura-admin-secret", adminSecret); st != 200 ||
		out["bucket"].(map[string]any)["downloadExpiration"] != "3600" || out["bucket"].(map[string]any)["maxUploadFileSize"] != "100000000" {
		t.Errorf("bucket after the edit: %d %v", st, out)
	}

	// Upload three files through the file input, watching the big one's progress.
	photo := testPNG(t, 640, 480)
	paths := map[string][]byte{"photo.png": photo, "notes.txt": []byte("hello from the console\n")}
	for name, b := range paths {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	big := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(big, bytes.Repeat([]byte("coffer console 50 MB upload. "), 50_000_000/29+1)[:50_000_000], 0o644); err != nil {
		t.Fatal(err)
	}
	tb.goTo("#/files/photos", "files")
	tb.wait(`document.getElementById('upload-input')`)
	// Record every value the progress bars take (the value attribute reflects it).
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__progress={};new MutationObserver(ms=>{for(const m of ms){` +
		`const li=m.target.closest('li');if(!li)continue;(window.__progress[li.dataset.name]=window.__progress[li.dataset.name]||[]).push(m.target.value)}})` +
		`.observe(document.getElementById('uploads'),{subtree:true,attributes:true,attributeFilter:['value']})`))
	// Uploads limited to 40 MB/s, so that the 50 MB one shows progress for about a
	// second whatever the machine (loopback alone takes ~0.2 s).
	tb.do(throttleUploads(40e6))
	uploadStart := time.Now()
	tb.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{filepath.Join(dir, "photo.png"), filepath.Join(dir, "notes.txt"), big}))
	tb.wait(`document.querySelectorAll('#uploads li.done').length===3`)
	t.Logf("three uploads (one of 50 MB) took %v in the browser", time.Since(uploadStart).Round(time.Millisecond))
	tb.do(throttleUploads(-1))
	progress := eval[map[string][]float64](tb, `window.__progress`)
	t.Logf("progress values of big.bin: %v", progress["big.bin"])
	between := 0
	for _, v := range progress["big.bin"] {
		if v > 0 && v < 100 {
			between++
		}
	}
	if between < 3 || progress["big.bin"][len(progress["big.bin"])-1] != 100 {
		t.Errorf("big.bin: no progress between 0 and 100 seen, or not ending at 100: %v", progress["big.bin"])
	}
	tb.wait(`document.querySelectorAll('#files tr[data-file]').length===3`)
	if imager != "" {
		tb.wait(`(()=>{const i=document.querySelector('img[data-thumb].loaded');return i&&i.complete&&i.naturalWidth===96})()`)
	} else {
		t.Log("no coffer-imager (libvips missing): thumbnails not checked")
	}
	tb.shot("03-files")

	// Details: preview, rename, metadata, presigned URL.
	tb.clickRow("photo.png", "a.file-link")
	tb.wait(`document.getElementById('fact-etag') && document.getElementById('fact-etag').textContent.length>10`)
	tb.wait(`(()=>{const i=document.getElementById('preview-img');return i&&i.complete&&i.naturalWidth>0})()`)
	id := tb.text("#fact-id")
	for sel, want := range map[string]string{"#fact-type": "image/png", "#fact-bucket": "photos", "#fact-size": fmt.Sprintf("%d", len(photo))} {
		if got := strings.ReplaceAll(tb.text(sel), ",", ""); !strings.Contains(got, want) {
			t.Errorf("details %s = %q, want %q", sel, got, want)
		}
	}
	tb.shot("04-details")
	tb.setText("#rename-input", "album/renamed.png")
	tb.click("#rename button[type=submit]")
	tb.wait(`document.getElementById('fact-name') && document.getElementById('fact-name').textContent==='album/renamed.png'`)
	tb.setText("#metadata-input", `{"caption": "a <b>gradient</b>", "price": 1.50}`)
	tb.click("#metadata button[type=submit]")
	tb.wait(`document.getElementById('details-msg').textContent==='Saved.'`)
	tb.wait(`document.getElementById('metadata-input').value.includes('"price": 1.50')`) // as written, not re-encoded
	if st, out := p.rpcJSON("FileService/GetFile", `{"id":"`+id+`"}`, "x-hasura-admin-secret", adminSecret); st != 200 ||
		out["file"].(map[string]any)["metadataJson"] != `{"caption":"a <b>gradient</b>","price":1.50}` {
		t.Errorf("metadata after the edit: %d %v", st, out)
	}
	tb.click("#presign-make")
	tb.wait(`document.getElementById('presign-url').value.startsWith('http')`)
	tb.click("#presign-copy")
	tb.wait(`document.getElementById('details-msg').textContent==='Copied.'`)
	presigned := eval[string](tb, `document.getElementById('presign-url').value`)
	resp, err := http.Get(presigned)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, photo) {
		t.Errorf("presigned URL %s: %d, %d bytes (want the %d of the photo)", presigned, resp.StatusCode, len(got), len(photo))
	}
	tb.shot("05-details-edited")
	// Replace the photo's contents: a smaller PNG; its name and metadata stay.
	small := testPNG(t, 320, 240)
	if err := os.WriteFile(filepath.Join(dir, "small.png"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	tb.do(chromedp.SetUploadFiles(chromedp.CSS("#replace-input"), []string{filepath.Join(dir, "small.png")}))
	tb.wait(`document.getElementById('details-msg').textContent==='Replaced.'`)
	tb.wait(`(()=>{const i=document.getElementById('preview-img');return i&&i.complete&&i.naturalWidth>0})()`)
	if st, out := p.rpcJSON("FileService/GetFile", `{"id":"`+id+`"}`, "x-hasura-admin-secret", adminSecret); st != 200 ||
		out["file"].(map[string]any)["size"] != fmt.Sprint(len(small)) || out["file"].(map[string]any)["name"] != "album/renamed.png" ||
		out["file"].(map[string]any)["metadataJson"] != `{"caption":"a <b>gradient</b>","price":1.50}` {
		t.Errorf("after the replace: %d %v, want size %d", st, out, len(small))
	}

	consoleRulesSteps(t, tb)
	consoleUserSteps(t, bctx, p, shots)

	// Delete: the two other files by multi-select, the photo from its panel.
	tb.goTo("#/files/photos", "files")
	tb.wait(`document.querySelectorAll('#files tr[data-file]').length===3`)
	for _, name := range []string{"notes.txt", "big.bin"} {
		tb.clickRow(name, "input[type=checkbox]")
	}
	tb.wait(`document.getElementById('delete-selected').textContent.includes('(2)')`)
	tb.click("#delete-selected")
	tb.confirm()
	tb.wait(`document.querySelectorAll('#files tr[data-file]').length===1 && document.getElementById('files-msg').textContent.includes('Deleted 2')`)
	tb.goTo("#/files/photos?file="+id, "files")
	tb.wait(`document.getElementById('delete-file')`)
	tb.click("#delete-file")
	tb.confirm()
	tb.wait(`!document.getElementById('details') && document.getElementById('files') && ` +
		`![...document.querySelectorAll('#files td a')].some(a=>a.textContent==='album/')`)
	if got := eval[[]string](tb, `[...document.querySelectorAll('#files td a')].map(a=>a.textContent)`); strings.Join(got, " ") != "hook-trigger.txt mine.txt" && strings.Join(got, " ") != "mine.txt" {
		t.Errorf("after the deletes the admin sees %q, want the user's mine.txt alone", got)
	}
	if st, _ := p.rpcJSON("FileService/GetFile", `{"id":"`+id+`"}`, "x-hasura-admin-secret", adminSecret); st != 404 {
		t.Errorf("deleted file: GetFile %d", st)
	}

	consoleAdminPages(t, tb, p)

	// Phone width, dark theme.
	tb.goTo("#/files/photos", "files")
	tb.do(chromedp.EmulateViewport(390, 844))
	tb.wait(`document.getElementById('dropzone')`)
	if w := eval[int](tb, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("phone width: the page is %d px wide, wider than the 390 px screen", w)
	}
	tb.shot("12-phone-files")
	tb.click("#theme") // system -> light
	tb.click("#theme") // light -> dark
	tb.wait(`document.documentElement.dataset.theme==='dark'`)
	if bg := eval[string](tb, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(18, 22, 21)" {
		t.Errorf("dark theme: body background %s", bg)
	}
	tb.shot("13-phone-dark")
	tb.do(chromedp.EmulateViewport(1280, 900))
	tb.goTo("#/rules", "rules")
	tb.wait(`document.getElementById('rules-doc').value.includes('photos')`)
	tb.shot("14-dark-rules")

	// Everything the page loaded came from the server itself (or blob: URLs it made).
	if n := eval[int](tb, `performance.getEntriesByType('resource').filter(e=>!e.name.startsWith(location.origin)&&!e.name.startsWith('blob:')).length`); n != 0 {
		t.Errorf("%d requests left the console's origin", n)
	}
}

// throttleUploads limits the tab's upload throughput to bytesPerSec (-1: none).
func throttleUploads(bytesPerSec float64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{DownloadThroughput: -1, UploadThroughput: bytesPerSec}}})
		return err
	})
}

// consoleRulesSteps: a mistake is shown at its line as typed; valid rules saved.
func consoleRulesSteps(t *testing.T, tb *tab) {
	tb.goTo("#/rules", "rules")
	tb.wait(`document.getElementById('rules-doc').value.includes('rules')`)
	bad := strings.Replace(consoleRules, "{_eq: X-Hasura-User-Id}", "{_eqx: X-Hasura-User-Id}", 1)
	tb.setText("#rules-doc", "")
	tb.do(chromedp.SendKeys(chromedp.CSS("#rules-doc"), bad))
	tb.wait(`document.getElementById('rules-status').className.includes('error')`)
	msg := tb.text("#rules-status")
	if !strings.HasPrefix(msg, "Line 7: rules[0].read.filter.uploaded_by_user_id._eqx") {
		t.Errorf("rules error: %q, want it at line 7 naming rules[0].read.filter.uploaded_by_user_id._eqx", msg)
	}
	if bad := tb.text("#rules-gutter .bad"); !strings.HasSuffix(bad, "7") {
		t.Errorf("gutter marks %q, want line 7", bad)
	}
	tb.shot("06-rules-error")
	tb.setText("#rules-doc", consoleRules)
	tb.wait(`document.getElementById('rules-status').textContent==='Valid.'`)
	tb.click("#rules-save")
	tb.wait(`document.getElementById('rules-save-msg').textContent==='Rules installed.'`)
	tb.shot("07-rules")
}

// consoleUserSteps: a user JWT sees only its own files, is refused a delete its
// rules do not allow (and told so), and is refused every admin page.
func consoleUserSteps(t *testing.T, bctx context.Context, p *proc, shots string) {
	user := newTab(t, bctx, p, shots)
	user.signIn(p.url, "jwt", consoleJWT(t, "user", "user-1"))
	if got := user.text("#who"); !strings.Contains(got, "role user, user user-1") {
		t.Errorf("who: %q", got)
	}
	if n := eval[int](user, `document.querySelectorAll('nav.nav a').length`); n != 1 {
		t.Errorf("a user sees %d navigation links, want Files alone", n)
	}
	user.wait(`document.getElementById('main').textContent.includes('This credential may not list buckets')`)
	user.goTo("#/files/photos", "files")
	user.wait(`document.getElementById('files') || document.getElementById('main').textContent.includes('No files here')`)
	if n := eval[int](user, `document.querySelectorAll('#files tr[data-file]').length`); n != 0 {
		t.Errorf("user sees %d of the admin's files", n)
	}
	mine := filepath.Join(t.TempDir(), "mine.txt")
	os.WriteFile(mine, []byte("the user's own file\n"), 0o644)
	user.do(chromedp.SetUploadFiles(chromedp.CSS("#upload-input"), []string{mine}))
	user.wait(`document.querySelectorAll('#files tr[data-file]').length===1`)
	if got := user.text("#files a.file-link"); got != "mine.txt" {
		t.Errorf("user's listing: %q", got)
	}
	user.shot("08-user-files")
	user.click("#files a.file-link")
	user.wait(`document.getElementById('fact-uploader') && document.getElementById('fact-uploader').textContent==='user-1'`)
	user.click("#delete-file")
	user.confirm()
	user.wait(`document.getElementById('details-msg').className.includes('refused')`)
	if got := user.text("#details-msg"); !strings.Contains(got, "This credential may not delete this file") {
		t.Errorf("refused delete: %q", got)
	}
	user.shot("09-user-delete-refused")
	for _, pg := range []struct{ hash, page, msgID, want string }{
		{"#/buckets", "buckets", "buckets-msg", "This credential may not manage buckets"},
		{"#/rules", "rules", "rules-status", "This credential may not read or change the permission rules"},
		{"#/webhooks", "webhooks", "webhooks-msg", "This credential may not manage webhooks"},
		{"#/server", "server", "server-msg", "This credential may not read the server's metrics"},
	} {
		user.goTo(pg.hash, pg.page)
		user.wait(fmt.Sprintf(`document.getElementById(%q) && document.getElementById(%q).className.includes('refused')`, pg.msgID, pg.msgID))
		if got := user.text("#" + pg.msgID); !strings.Contains(got, pg.want) {
			t.Errorf("user on %s: %q, want %q", pg.hash, got, pg.want)
		}
		if pg.page == "buckets" {
			user.shot("10-user-admin-refused")
			if eval[bool](user, `!!document.getElementById('buckets')`) {
				t.Error("a refused user sees the buckets table")
			}
		}
	}
	if rules := eval[string](user, `document.getElementById('rules-doc') ? document.getElementById('rules-doc').value : ''`); rules != "" {
		t.Errorf("the user sees rules: %q", rules)
	}
}

// consoleAdminPages: webhooks (a failing delivery redelivered), sites (created,
// purged) and the live server view, each screenshotted.
func consoleAdminPages(t *testing.T, tb *tab, p *proc) {
	var hits sync.WaitGroup
	hits.Add(1)
	var once sync.Once
	recv := newStatusServer(t, 500, func() { once.Do(hits.Done) })
	tb.goTo("#/webhooks", "webhooks")
	tb.click("#main details.card summary")
	tb.do(chromedp.SendKeys(chromedp.CSS("#wh-url"), recv+"/hook"), chromedp.SendKeys(chromedp.CSS("#wh-bucket"), "photos"),
		chromedp.Click(chromedp.CSS("#new-webhook button[type=submit]")))
	tb.wait(`document.getElementById('webhooks-msg').textContent.includes('whsec_')`)
	p.uploadDeclared("photos", "hook-trigger.txt", "text/plain", "x")
	hits.Wait()
	tb.click("#webhooks tbody button")
	tb.wait(`document.querySelector('#deliveries tr[data-delivery]')`)
	tb.click("#deliveries tr[data-delivery] button")
	tb.wait(`document.getElementById('webhooks-msg').textContent.includes('is pending again')`)
	tb.shot("11a-webhooks")

	tb.goTo("#/sites", "sites")
	tb.wait(`document.getElementById('new-site') || document.getElementById('sites-msg').textContent`)
	if eval[bool](tb, `!!document.getElementById('new-site')`) {
		tb.click("#main details.card summary")
		tb.click("#main details.card button[type=submit]")
		tb.wait(`document.querySelector('section[data-site="www"]')`)
		tb.do(chromedp.Click(chromedp.CSS(`section[data-site="www"] details summary`)))
		tb.click(`form[data-purge="www"] button[type=submit]`)
		tb.wait(`document.getElementById('sites-msg').textContent.includes('Purged')`)
	} else {
		t.Errorf("sites page: %q", tb.text("#sites-msg"))
	}
	tb.shot("11b-sites")

	tb.goTo("#/server", "server")
	tb.wait(`(document.querySelector('#chart-rps svg')?.dataset.values||'').split(',').length>=2`)
	tb.wait(`document.getElementById('caches')`)
	tb.shot("11c-server")
}

// newStatusServer answers every request with status and calls hit.
func newStatusServer(t *testing.T, status int, hit func()) string {
	srv := http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(status)
		hit()
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}
