package e2e

import (
	"bytes"
	"database/sql"
	bin "encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	_ "modernc.org/sqlite"
)

// xssPayload runs the canary if it is ever parsed as HTML.
const xssPayload = `<img src=x onerror="window.__pwned=1">`

// noInjection fails if the page holds markup that came from data: an element with
// an event handler attribute, a script but the console's own, or the canary set.
func noInjection(t *testing.T, tb *tab, where string) {
	t.Helper()
	if eval[bool](tb, `window.__pwned===1`) {
		t.Errorf("%s: window.__pwned is set: a payload ran", where)
	}
	if n := eval[int](tb, `document.querySelectorAll('[onerror],[onload],[onclick]').length`); n != 0 {
		t.Errorf("%s: %d elements with event handler attributes: data was parsed as HTML", where, n)
	}
	if n := eval[int](tb, `document.scripts.length`); n != 1 {
		t.Errorf("%s: %d script elements, want the console's one", where, n)
	}
}

// TestConsoleXSS: hostile file names, metadata, bucket ids and routes are shown as
// text, and the console's CSP blocks inline script injected into the page (while
// the same injection runs on a page without it, so the check can fail).
func TestConsoleXSS(t *testing.T) {
	bctx := newBrowser(t, 4*time.Minute)
	shots := screenshotDir(t)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	p.adminDo("POST", "/v1/buckets", `{"id":"xss"}`, 201)
	names := []string{xssPayload + ".txt", `<script>window.__pwned=1</script>.txt`, `"><svg onload=window.__pwned=1>.txt`}
	var first string
	for i, n := range names {
		id := p.uploadDeclared("xss", fmt.Sprintf("payload-%d.txt", i), "text/plain", "payload "+n)
		name, _ := json.Marshal(n) // the upload's filename loses what precedes a "/": name it after
		if st, out := p.rpcJSON("FileService/UpdateFile", `{"id":"`+id+`","name":`+string(name)+`}`, "x-hasura-admin-secret", adminSecret); st != 200 {
			t.Fatalf("rename to %s: %d %v", n, st, out)
		}
		if i == 0 {
			first = id
		}
	}
	if st, out := p.rpcJSON("FileService/UpdateFile", `{"id":"`+first+`","metadataJson":"{\"x\":\"`+strings.ReplaceAll(xssPayload, `"`, `\\\"`)+`\"}"}`,
		"x-hasura-admin-secret", adminSecret); st != 200 {
		t.Fatalf("metadata: %d %v", st, out)
	}
	tb := newTab(t, bctx, p, shots)
	tb.signIn(p.url, "admin", adminSecret)

	tb.goTo("#/files/xss", "files")
	tb.wait(`document.querySelectorAll('#files tr').length>=3`)
	links := eval[[]string](tb, `[...document.querySelectorAll('#files td a')].map(a=>a.textContent)`)
	want := []string{`"><svg onload=window.__pwned=1>.txt`, `<img src=x onerror="window.__pwned=1">.txt`, `<script>window.__pwned=1</`}
	sort.Strings(links)
	sort.Strings(want)
	if strings.Join(links, "|") != strings.Join(want, "|") {
		t.Errorf("names shown: %q, want %q", links, want)
	}
	noInjection(t, tb, "file list")
	tb.shot("01-xss-list")
	tb.goTo("#/files/xss?file="+first, "files")
	tb.wait(`document.getElementById('metadata-input')`)
	if got := eval[string](tb, `JSON.parse(document.getElementById('metadata-input').value).x`); got != xssPayload {
		t.Errorf("metadata shown: %q", got)
	}
	if got := tb.text("#fact-name"); got != names[0] {
		t.Errorf("details name %q", got)
	}
	tb.wait(`document.getElementById('preview-text')`)
	noInjection(t, tb, "details")
	tb.shot("02-xss-details")
	tb.goTo("#/files/xss?prefix="+`%3Cscript%3Ewindow.__pwned%3D1%3C%2F`, "files")
	tb.wait(`document.querySelector('#files a.file-link')`)
	noInjection(t, tb, "payload folder")

	// A bucket id that is a payload: refused by the server, its message shown as text.
	tb.goTo("#/buckets", "buckets")
	tb.click("#main details.card summary")
	tb.do(chromedp.SendKeys(chromedp.CSS("#new-bucket-id"), xssPayload), chromedp.Click(chromedp.CSS("#new-bucket button[type=submit]")))
	tb.wait(`document.getElementById('buckets-msg').className.includes('error')`)
	t.Logf("bad bucket id: %s", tb.text("#buckets-msg"))
	noInjection(t, tb, "bucket id")
	tb.goTo("#/files/"+`%3Cimg%20src%3Dx%20onerror%3D%22window.__pwned%3D1%22%3E`, "files")
	tb.wait(`document.getElementById('files-msg').textContent`)
	if got := tb.text(".crumbs li:nth-child(2)"); got != xssPayload {
		t.Errorf("bucket crumb: %q", got)
	}
	noInjection(t, tb, "bucket route")
	tb.shot("03-xss-bucket-route")

	// The CSP: inline script injected into the console's DOM does not run, and the
	// browser reports the violations; on a page without the CSP the same runs.
	inject := `(async()=>{window.__violations=0;document.addEventListener('securitypolicyviolation',()=>window.__violations++);` +
		`document.body.insertAdjacentHTML('beforeend','<img src=x onerror="window.__pwned=1">');` +
		`const s=document.createElement('script');s.textContent='window.__pwned=1';document.body.append(s);` +
		`const d=document.createElement('div');d.setAttribute('onclick','window.__pwned=1');document.body.append(d);d.click();` +
		`await new Promise(r=>setTimeout(r,300));return {pwned:window.__pwned===1,violations:window.__violations}})()`
	type result struct {
		Pwned      bool `json:"pwned"`
		Violations int  `json:"violations"`
	}
	got := eval[result](tb, inject)
	if got.Pwned || got.Violations < 3 {
		t.Errorf("console page: injected script ran=%v, CSP violations reported %d (want not run, 3)", got.Pwned, got.Violations)
	}
	bare := newStatusServer(t, 200, func() {})
	ctl := newTab(t, bctx, p, shots)
	ctl.do(chromedp.Navigate(bare + "/"))
	if got := eval[result](ctl, inject); !got.Pwned {
		t.Error("control page without CSP: the injection did not run, so the check above proves nothing")
	}

	// No cookies, so no CSRF: nothing sets one, and a request without the header
	// credential (what a cross-site form sends) is refused.
	if c := eval[string](tb, `document.cookie`); c != "" {
		t.Errorf("cookies: %q", c)
	}
	for _, path := range []string{"/console/", "/console/app.js", "/console"} {
		resp, err := http.Get(p.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s sets a cookie", path)
		}
	}
	// (A cross-site form can send a text/plain body that is JSON, but no header.)
	resp, err := http.Post(p.url+"/v1/buckets", "text/plain", strings.NewReader(`{"id":"csrf"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 && resp.StatusCode != 403 {
		t.Errorf("a form POST without credentials: %d", resp.StatusCode)
	}
	if st, _ := p.rpcJSON("BucketService/GetBucket", `{"id":"csrf"}`, "x-hasura-admin-secret", adminSecret); st != 404 {
		t.Errorf("the credential-less POST made a bucket: GetBucket %d", st)
	}
}

// TestConsoleFirstLoad measures what a browser transfers to load the console
// (compressed, headers included): at most 300 KB.
func TestConsoleFirstLoad(t *testing.T) {
	bctx := newBrowser(t, 2*time.Minute)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.signIn(p.url, "admin", adminSecret)
	tb.wait(`document.querySelector('#bucket-list a')`)
	type entry struct {
		Name     string  `json:"name"`
		Transfer float64 `json:"transferSize"`
		Encoded  float64 `json:"encodedBodySize"`
		Decoded  float64 `json:"decodedBodySize"`
	}
	entries := eval[[]entry](tb, `[...performance.getEntriesByType('navigation'),...performance.getEntriesByType('resource')]`+
		`.filter(e=>e.name.includes('/console/')).map(e=>({name:e.name,transferSize:e.transferSize,encodedBodySize:e.encodedBodySize,decodedBodySize:e.decodedBodySize}))`)
	var transfer, decoded float64
	for _, e := range entries {
		transfer += e.Transfer
		decoded += e.Decoded
	}
	t.Logf("first load of the console: %d files, %.0f bytes transferred (compressed, with headers), %.0f bytes uncompressed", len(entries), transfer, decoded)
	if len(entries) < 10 || transfer == 0 {
		t.Fatalf("measured %d entries, %.0f bytes: the measure is broken", len(entries), transfer)
	}
	if transfer > 300_000 {
		t.Errorf("first load transfers %.0f bytes, over 300 KB", transfer)
	}
	// Every asset came compressed.
	for _, e := range entries {
		if e.Decoded > 1000 && e.Encoded >= e.Decoded {
			t.Errorf("%s was not compressed (%.0f of %.0f bytes)", e.Name, e.Encoded, e.Decoded)
		}
	}
	// The off switch.
	q := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_CONSOLE=false")
	resp, err := http.Get(q.url + "/console/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("--console=false: /console/ answers %d", resp.StatusCode)
	}
}

// TestConsoleTenants: the platform admin's tenants page (create, usage), and the
// console on a tenant (by its /t/{id}/ path) calling that tenant's APIs.
func TestConsoleTenants(t *testing.T) {
	bctx := newBrowser(t, 3*time.Minute)
	shots := screenshotDir(t)
	const platform, acmeSecret = "console-platform-secret-0123", "acme-admin-secret-0123456"
	p := start(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_TENANTS=true", "COFFER_PLATFORM_SECRET="+platform,
		"COFFER_TENANT_KEY=MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "COFFER_DEFAULT_TENANT_HOSTS=127.0.0.1",
		"COFFER_TENANT_PATH_PREFIX=true")
	tb := newTab(t, bctx, p, shots)
	tb.signIn(p.url, "platform", platform)
	tb.wait(`document.getElementById('new-tenant')`)
	tb.click("#main details.card summary")
	tb.do(chromedp.SendKeys(chromedp.CSS("#tn-id"), "acme"), chromedp.SendKeys(chromedp.CSS("#tn-hosts"), "files.acme.test"),
		chromedp.SendKeys(chromedp.CSS("#tn-secret"), acmeSecret), chromedp.SetValue(chromedp.CSS("#tn-max-bytes"), "100000000"),
		chromedp.Click(chromedp.CSS("#new-tenant button[type=submit]")))
	tb.wait(`document.querySelector('tr[data-tenant="acme"] td:nth-child(4)') && document.querySelector('tr[data-tenant="acme"] td:nth-child(4)').textContent.includes('0 files')`)
	if got := tb.text(`tr[data-tenant="acme"]`); !strings.Contains(got, "files.acme.test") || !strings.Contains(got, "of 100 MB") {
		t.Errorf("tenant row: %q", got)
	}
	tb.shot("01-tenants")
	tb.click(`tr[data-tenant="acme"] button`) // Suspend
	tb.wait(`(document.querySelector('tr[data-tenant="acme"] td:nth-child(3)')||{}).textContent==='suspended'`)
	tb.click(`tr[data-tenant="acme"] button`) // Resume
	tb.wait(`(document.querySelector('tr[data-tenant="acme"] td:nth-child(3)')||{}).textContent==='active'`)

	// acme's console: its own admin secret works, the default tenant's does not.
	at := newTab(t, bctx, p, shots)
	at.do(chromedp.Navigate(p.url+"/t/acme/console"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	at.do(chromedp.SendKeys(chromedp.CSS("#signin input[name=value]"), adminSecret), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	at.wait(`document.getElementById('signin-msg').className.includes('error')`)
	at.do(chromedp.SetValue(chromedp.CSS("#signin input[name=value]"), acmeSecret), chromedp.Click(chromedp.CSS("#signin button[type=submit]")))
	at.wait(`document.querySelector('#bucket-list a')`)
	if got := eval[string](at, `location.pathname`); got != "/t/acme/console/" {
		t.Errorf("acme's console at %q", got)
	}
	p.adminDo("POST", "/v1/buckets", `{"id":"default-only"}`, 201)
	if got := at.text("#bucket-list"); got != "default" {
		t.Errorf("acme's buckets: %q (want its own default only)", got)
	}
	at.shot("02-tenant-console")
}

// TestConsoleListing100k: a bucket of 100,000 files lists a page in at most 100 ms
// of server time (Server-Timing), through the API and as the console shows it.
func TestConsoleListing100k(t *testing.T) {
	const n = 100_000
	dir := t.TempDir()
	p := start(t, "COFFER_DATA_DIR="+dir)
	p.adminDo("POST", "/v1/buckets", `{"id":"big"}`, 201)
	p.uploadDeclared("big", "seed.txt", "text/plain", "seed")
	p.stop()
	// The rows are written straight into the stopped server's SQLite database, each
	// a copy of the seed's row under its own id and name (100,000 uploads over HTTP
	// would take minutes and measure the upload path instead).
	db, err := sql.Open("sqlite", filepath.Join(dir, "coffer.db"))
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err = db.Exec(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM seq WHERE i < ?)
		INSERT INTO files (tenant_id, id, bucket_id, name, size, mime_type, etag, is_uploaded, uploaded_by_user_id, metadata,
			blob_key, created_at, updated_at, named)
		SELECT f.tenant_id, printf('%08x-0000-4000-8000-%012x', i, i), f.bucket_id,
			printf('dir%02d/file-%06d.txt', i % 20, i), f.size, f.mime_type, f.etag, 1, '', f.metadata, f.blob_key,
			f.created_at, f.updated_at, 0
		FROM seq, files f WHERE f.bucket_id = 'big' AND f.name = 'seed.txt'`, n-1)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d rows written in %v", n-1, time.Since(began).Round(time.Millisecond))
	p = start(t, "COFFER_DATA_DIR="+dir)

	// Through the API: the first page, 20 pages on, and a name-prefix search.
	timing := func(body string) float64 {
		t.Helper()
		req, _ := http.NewRequest("POST", p.url+"/coffer.admin.v1.FileService/ListFiles", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-hasura-admin-secret", adminSecret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("ListFiles %s: %d", body, resp.StatusCode)
		}
		return serverTimingApp(t, resp.Header.Get("Server-Timing"))
	}
	bodies := []string{`{"bucketId":"big","pageSize":100}`, `{"bucketId":"big","prefix":"dir07/","pageSize":100}`,
		`{"bucketId":"big","prefix":"dir13/file-0500","pageSize":100}`}
	// Folders (ListFiles with a delimiter): the root's 20 folders, and one folder's page.
	bodies = append(bodies, `{"bucketId":"big","delimiter":"/","pageSize":100}`, `{"bucketId":"big","prefix":"dir07/","delimiter":"/","pageSize":100}`)
	var all []float64
	for _, body := range bodies {
		var ms []float64
		for range 20 {
			ms = append(ms, timing(body))
		}
		sort.Float64s(ms)
		t.Logf("ListFiles %s: server time median %.2f ms, max %.2f ms (20 calls)", body, ms[len(ms)/2], ms[len(ms)-1])
		all = append(all, ms...)
	}
	sort.Float64s(all)
	if all[len(all)-1] > 100 {
		t.Errorf("a page of a %d-file bucket took %.1f ms of server time, over 100 ms", n, all[len(all)-1])
	}

	// In the console: the page and its "server N ms" line.
	bctx := newBrowser(t, 2*time.Minute)
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.signIn(p.url, "admin", adminSecret)
	tb.goTo("#/files/big?prefix=dir07/", "files")
	tb.wait(`document.querySelectorAll('#files tr[data-file]').length===100`)
	shown := tb.text("#server-time")
	tb.click("#next-page")
	tb.wait(`document.getElementById('prev-page') && !document.getElementById('prev-page').disabled && document.querySelectorAll('#files tr[data-file]').length===100`)
	shown2 := tb.text("#server-time")
	t.Logf("the console shows %q for the first page of dir07/ and %q for the next", shown, shown2)
	for _, s := range []string{shown, shown2} {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(s, "server "), " ms"), 64)
		if err != nil || v > 100 {
			t.Errorf("console server time %q", s)
		}
	}
	tb.shot("01-files-100k")
	// Search by name prefix: 5 of the 100,000 names begin with dir13/file-0500.
	tb.goTo("#/files/big", "files")
	tb.wait(`document.querySelector('#files tbody tr')`)
	tb.setText("#search", "dir13/file-0500")
	tb.click(`form[role=search] button[type=submit]`)
	tb.wait(`location.hash.includes('q=') && document.querySelectorAll('#files tr[data-file]').length===5`)
	t.Logf("search: %s", tb.text("#server-time"))
}

// serverTimingApp returns the "app" duration of a Server-Timing header, in ms.
func serverTimingApp(t *testing.T, hdr string) float64 {
	t.Helper()
	for _, part := range strings.Split(hdr, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if name != "app" {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(p), "dur="); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err == nil {
					return f
				}
			}
		}
	}
	t.Fatalf("no app duration in Server-Timing %q", hdr)
	return 0
}

// TestConsoleKeyboard: signing in and moving between pages by keyboard alone, every
// form control of every page has a label (an accessible name); a dropped file uploads.
func TestConsoleKeyboard(t *testing.T) {
	bctx := newBrowser(t, 2*time.Minute)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	p.uploadDeclared("default", "a.txt", "text/plain", "a")
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.do(chromedp.Navigate(p.url+"/console/"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	// The secret field has the focus: type it and press Enter.
	tb.wait(`document.activeElement && document.activeElement.name==='value'`)
	tb.do(chromedp.KeyEvent(adminSecret), chromedp.KeyEvent("\r"))
	tb.wait(`document.querySelector('#bucket-list a')`)
	// Tab to the "Rules" link and follow it with Enter.
	for i := 0; i < 30 && !eval[bool](tb, `document.activeElement && document.activeElement.textContent==='Rules'`); i++ {
		tb.do(chromedp.KeyEvent("\t"))
	}
	tb.do(chromedp.KeyEvent("\r"))
	tb.wait(`document.getElementById('main').dataset.page==='rules'`)
	if outline := eval[string](tb, `(()=>{document.getElementById('rules-save').focus();return getComputedStyle(document.activeElement).outlineStyle})()`); outline == "none" {
		t.Errorf("no focus outline on a focused button")
	}
	// A page still waiting for the server when the route changes draws nothing
	// into the next one.
	tb.do(chromedp.Evaluate[chromedp.Void](`location.hash='#/files';setTimeout(()=>{location.hash='#/rules'},0)`))
	tb.wait(`document.getElementById('main').dataset.page==='rules' && document.getElementById('rules-doc').value`)
	time.Sleep(300 * time.Millisecond)
	if n := eval[int](tb, `document.getElementById('main').children.length + document.querySelectorAll('#main #bucket-list, #main #open-bucket').length`); n != 1 {
		t.Errorf("after a quick route change #main holds %d views or leftovers of the files page", n)
	}
	unlabelled := `[...document.querySelectorAll('input,select,textarea')].filter(e=>e.type!=='hidden'&&!(e.labels&&e.labels.length)&&!e.getAttribute('aria-label')).map(e=>e.outerHTML.slice(0,80))`
	for _, pg := range []struct{ hash, page, ready string }{
		{"#/files", "files", `document.querySelector('#bucket-list a')`},
		{"#/files/default", "files", `document.querySelector('#files tr[data-file]')`},
		{"#/buckets", "buckets", `document.getElementById('buckets')`},
		{"#/rules", "rules", `document.getElementById('rules-doc').value`},
		{"#/webhooks", "webhooks", `document.getElementById('new-webhook')`},
		{"#/sites", "sites", `document.getElementById('new-site')`},
		{"#/server", "server", `document.getElementById('caches')`},
	} {
		tb.goTo(pg.hash, pg.page)
		tb.wait(pg.ready)
		if bad := eval[[]string](tb, unlabelled); len(bad) != 0 {
			t.Errorf("%s: controls without a label: %q", pg.hash, bad)
		}
	}
	tb.goTo("#/files/default", "files")
	tb.wait(`document.querySelector('#files a.file-link')`)
	// A file dropped on the drop zone is uploaded (a DragEvent carrying a File, as a
	// drag from the desktop delivers it).
	tb.do(chromedp.Evaluate[chromedp.Void](`(()=>{const dt=new DataTransfer();dt.items.add(new File(['dropped\n'],'dropped.txt',{type:'text/plain'}));` +
		`document.getElementById('dropzone').dispatchEvent(new DragEvent('drop',{dataTransfer:dt,bubbles:true,cancelable:true}))})()`))
	tb.wait(`[...document.querySelectorAll('#files a.file-link')].some(a=>a.textContent==='dropped.txt')`)
	tb.click("#files a.file-link")
	tb.wait(`document.getElementById('rename-input')`)
	if bad := eval[[]string](tb, unlabelled); len(bad) != 0 {
		t.Errorf("file details: controls without a label: %q", bad)
	}
}

// TestConsoleAPIAdditions drives what the console uses of the management API's
// additions for it: folders from ListFiles' delimiter, the rules tester
// (RuleService.CheckAccess), a presigned URL's chosen expiry.
func TestConsoleAPIAdditions(t *testing.T) {
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	if st, out := p.rpcJSON("FileService/ListFiles", `{"bucketId":"default","delimiter":"/"}`, "x-hasura-admin-secret", adminSecret); st != 200 {
		t.Fatalf("ListFiles with a delimiter: %d %v", st, out)
	}
	bctx := newBrowser(t, 3*time.Minute)
	shots := screenshotDir(t)
	for _, n := range []string{"a/one.txt", "a/two.txt", "b/c/three.txt", "top.txt"} {
		id := p.uploadDeclared("default", "x.txt", "text/plain", n)
		name, _ := json.Marshal(n)
		if st, out := p.rpcJSON("FileService/UpdateFile", `{"id":"`+id+`","name":`+string(name)+`}`, "x-hasura-admin-secret", adminSecret); st != 200 {
			t.Fatalf("rename: %d %v", st, out)
		}
	}
	tb := newTab(t, bctx, p, shots)
	tb.signIn(p.url, "admin", adminSecret)
	tb.goTo("#/files/default", "files")
	tb.wait(`document.querySelectorAll('#files tbody tr').length===3`)
	if got := eval[[]string](tb, `[...document.querySelectorAll('#files tbody td a')].map(a=>a.textContent)`); strings.Join(got, " ") != "a/ b/ top.txt" {
		t.Errorf("root of default: %q, want a/ b/ top.txt", got)
	}
	if eval[bool](tb, `!!document.getElementById('no-delimiter')`) {
		t.Error("the console fell back to folders of one page")
	}
	tb.shot("01-folders")
	tb.goTo("#/files/default?prefix=b/", "files")
	tb.wait(`document.querySelectorAll('#files tbody tr').length===1`)
	if got := tb.text("#files tbody td a"); got != "c/" {
		t.Errorf("b/: %q", got)
	}

	// A presigned URL of 5 minutes (the bucket allows up to an hour).
	p.adminDo("PATCH", "/v1/buckets/default", `{"downloadExpiration":3600}`, 200)
	tb.goTo("#/files/default?q=top", "files")
	tb.wait(`document.querySelector('#files a.file-link')`)
	tb.click("#files a.file-link")
	tb.wait(`document.getElementById('presign-expiry')`)
	fileID := tb.text("#fact-id")
	tb.do(chromedp.SetValue(chromedp.CSS("#presign-expiry"), "300"))
	tb.click("#presign-make")
	tb.wait(`document.getElementById('presign-expires').textContent`)
	if got := tb.text("#presign-expires"); got != "Expires in 300 s." {
		t.Errorf("presign expiry: %q", got)
	}
	resp, err := http.Get(eval[string](tb, `document.getElementById('presign-url').value`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("presigned URL: %d", resp.StatusCode)
	}

	// The tester, opened from the file: role user may read some of the bucket's
	// files (its own), not this one (the admin's), and may delete none.
	p.adminDo("PUT", "/v1/rules", `{"rules":[{"role":"user","buckets":["default"],"read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`, 200)
	tb.click("#test-access")
	tb.wait(`document.getElementById('main').dataset.page==='rules' && document.getElementById('t-file')`)
	if got := eval[string](tb, `document.getElementById('t-file').value`); got != fileID {
		t.Errorf("tester file %q, want %q", got, fileID)
	}
	check := func(file, action, want string) string {
		t.Helper()
		tb.setText("#t-user", "u1")
		tb.setText("#t-file", file)
		tb.do(chromedp.SetValue(chromedp.CSS("#t-action"), action))
		tb.do(chromedp.Evaluate[chromedp.Void](`document.getElementById('tester-result').replaceChildren()`))
		tb.click("#tester button[type=submit]")
		tb.wait(`document.getElementById('tester-verdict')`)
		got := tb.text("#tester-result")
		t.Logf("tester %s %q: %q", action, file, got)
		if !strings.HasPrefix(got, want) {
			t.Errorf("tester %s %q: %q, want %s", action, file, got, want)
		}
		return got
	}
	if got := check("", "read", "Allowed"); !strings.Contains(got, "rules[0].read") {
		t.Errorf("tester: no deciding rule in %q", got)
	}
	check(fileID, "read", "Refused")
	tb.shot("02-tester")
	check("", "delete", "Refused")

	// Server-Timing of a listing, as the console shows it.
	tb.goTo("#/files/default", "files")
	tb.wait(`document.getElementById('server-time').textContent.startsWith('server ')`)
}

// TestConsoleModules runs the console's pure functions in the browser, imported
// from the served modules: the rules path → line locator, the JSON indenter that
// keeps numbers as written, the metrics parser and p99, the Server-Timing reader.
func TestConsoleModules(t *testing.T) {
	bctx := newBrowser(t, time.Minute)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.do(chromedp.Navigate(p.url+"/console/"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	got := eval[map[string]any](tb, `(async()=>{
  const r = await import('./rules.js'), d = await import('./details.js'), s = await import('./server.js'), a = await import('./api.js');
  const yaml = 'rules:\n  - role: user\n    buckets: [a]\n    read:\n      filter: {size: {_gt: 1}}\n  - role: other\n    buckets: [b]\n    read:\n      filter:\n        size:\n          _gtx: 1\n';
  const json = JSON.stringify({rules:[{role:'u',buckets:['a']},{role:'x',buckets:['b'],read:{filter:{size:{_gtx:1}}}}]}, null, 2);
  const flow = '{"rules":[{"role":"u"},{"role":"x","read":{"filter":{"size":{"_gtx":1}}}}]}';
  const m = s.snapshot(s.parseMetrics('coffer_http_request_duration_seconds_bucket{le="0.001"} 50\ncoffer_http_request_duration_seconds_bucket{le="0.01"} 99\ncoffer_http_request_duration_seconds_bucket{le="0.1"} 100\ncoffer_http_request_duration_seconds_bucket{le="+Inf"} 100\ncoffer_http_request_duration_seconds_count{route="/v1/"} 100\n# HELP x\ncoffer_cache_hits_total{cache="file"} 7\n'));
  const zero = s.snapshot([]);
  return {
    yamlDeep: r.lineOf(yaml, 'rules[1].read.filter.size._gtx'), yamlItem: r.lineOf(yaml, 'rules[1].buckets'),
    yamlMissing: r.lineOf(yaml, 'rules[5].read'), jsonDeep: r.lineOf(json, 'rules[1].read.filter.size._gtx'),
    flow: r.lineOf(flow, 'rules[1].read.filter.size._gtx'), segments: r.segments('rules[10].read.filter._and[2]').join('|'),
    pretty: d.prettyJSON('{"a":1.50,"b":[],"c":{"d":"x\\"y"},"n":12345678901234567890}'),
    count: m.count, hits: m.hits.file, p99: s.p99(zero, m),
    timing: a.serverTime(new Response('', {headers: {'Server-Timing': 'auth;dur=0.01, meta;dur=0.2, app;dur=1.25'}})),
  };
})()`)
	want := map[string]any{
		"yamlDeep": 11.0, "yamlItem": 7.0, "yamlMissing": 1.0, "jsonDeep": 17.0, "flow": 1.0,
		"segments": "rules|10|read|filter|_and|2",
		"pretty":   "{\n  \"a\": 1.50,\n  \"b\": [],\n  \"c\": {\n    \"d\": \"x\\\"y\"\n  },\n  \"n\": 12345678901234567890\n}",
		"count":    100.0, "hits": 7.0, "p99": 10.0, "timing": 1.25,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %#v, want %#v", k, got[k], v)
		}
	}
}

// TestConsolePreviews: the details panel previews audio (a presigned URL, under the
// CSP's media-src), PDF (a blob: URL in a frame), SVG (in an <img>) and text.
func TestConsolePreviews(t *testing.T) {
	bctx := newBrowser(t, 2*time.Minute)
	p := start(t, "COFFER_DATA_DIR="+t.TempDir())
	// One second of a 440 Hz square wave, 8 kHz 8-bit mono WAV.
	var wav bytes.Buffer
	wav.WriteString("RIFF")
	bin.Write(&wav, bin.LittleEndian, uint32(36+8000))
	wav.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(8000), uint32(8000), uint16(1), uint16(8)} {
		bin.Write(&wav, bin.LittleEndian, v)
	}
	wav.WriteString("data")
	bin.Write(&wav, bin.LittleEndian, uint32(8000))
	for i := range 8000 {
		wav.WriteByte(byte(128 + 60*((i/9)%2*2-1)))
	}
	pdf := "%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj " +
		"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
	svg := `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><rect width="40" height="30" fill="teal"/><script>window.__pwned=1</script></svg>`
	ids := map[string]string{
		"audio": p.uploadDeclared("default", "tone.wav", "audio/wav", wav.String()),
		"pdf":   p.uploadDeclared("default", "doc.pdf", "application/pdf", pdf),
		"svg":   p.uploadDeclared("default", "pic.svg", "image/svg+xml", svg),
		"text":  p.uploadDeclared("default", "readme.md", "text/markdown", "# hello\n<b>not bold</b>\n"),
	}
	tb := newTab(t, bctx, p, screenshotDir(t))
	tb.signIn(p.url, "admin", adminSecret)
	// Every preview must load under the CSP: a blocked frame or media source would
	// still leave its element in place, so count the violations the page reports.
	tb.do(chromedp.Evaluate[chromedp.Void](`window.__cspv=[];document.addEventListener('securitypolicyviolation',` +
		`e=>window.__cspv.push(e.effectiveDirective+' '+e.blockedURI))`))
	for kind, ready := range map[string]string{
		"audio": `(()=>{const m=document.getElementById('preview-media');return m&&m.readyState>=1&&Math.abs(m.duration-1)<0.01})()`,
		"pdf":   `(()=>{const f=document.getElementById('preview-pdf');return f&&f.src.startsWith('blob:')})()`,
		"svg":   `(()=>{const i=document.getElementById('preview-img');return i&&i.complete&&i.naturalWidth===40})()`,
		"text":  `(document.getElementById('preview-text')||{}).textContent==='# hello\n<b>not bold</b>\n'`,
	} {
		tb.goTo("#/files/default?file="+ids[kind], "files")
		tb.wait(ready)
		if kind == "audio" {
			if src := eval[string](tb, `document.getElementById('preview-media').src`); !strings.Contains(src, "X-Amz-Signature") {
				t.Errorf("audio preview from %q, want a presigned URL", src)
			}
		}
		tb.shot("preview-" + kind)
	}
	if v := eval[[]string](tb, `window.__cspv`); len(v) != 0 {
		t.Errorf("the previews broke the CSP: %q", v)
	}
	noInjection(t, tb, "previews")
}
