package api_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/internal/apptest"
	"github.com/coffer/coffer/internal/httpserve"
	"github.com/coffer/coffer/rpcapi"
)

// named is a face that answers every request with its name.
type named struct {
	name     string
	prefixes []string
}

func (f named) Prefixes() []string { return f.prefixes }
func (f named) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.WriteString(w, f.name)
}

// get GETs url and returns the answer with its body read.
func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp, string(b)
}

// Each path goes to the face with the longest prefix claiming it; a prefix without
// a trailing slash claims one path; the others go to the fallback.
func TestRouterPrefixes(t *testing.T) {
	rt, err := api.New(named{"hasura", []string{"/v1/", "/healthz", "/metrics"}},
		named{"tus", []string{"/tus/"}}, named{"tus-admin", []string{"/tus/admin/"}}, named{"s3", []string{"/s3/"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rt)
	defer srv.Close()
	for path, want := range map[string]string{
		"/v1/files/x": "hasura", "/healthz": "hasura", "/metrics": "hasura", "/healthzz": "hasura",
		"/tus/": "tus", "/tus/files/1": "tus", "/tus/admin/x": "tus-admin", "/tus/admin": "tus",
		"/tus": "hasura", "/s3/bucket/key": "s3", "/": "hasura", "/nope": "hasura", "/v1": "hasura",
	} {
		if _, body := get(t, srv.Client(), srv.URL+path); body != want {
			t.Errorf("%s: served by %q, want %q", path, body, want)
		}
	}
}

// refusing is a face that writes its name and the refusal's status when refusing.
type refusing struct{ named }

func (f refusing) Refuse(w http.ResponseWriter, _ *http.Request, err error) {
	w.WriteHeader(httpserve.StatusOf(err))
	_, _ = io.WriteString(w, f.name+" refuses")
}

var (
	_ api.Refuser = (*hasura.Handler)(nil)
	_ api.Refuser = (*rpcapi.Handler)(nil)
)

// Refuse answers in the protocol of the face the path belongs to (RefuseAt: the
// path given), the fallback's for a face that cannot refuse or a path no face
// claims; a fallback that cannot refuse either answers in plain text.
func TestRouterRefuse(t *testing.T) {
	rt, err := api.New(refusing{named{"hasura", []string{"/v1/"}}},
		refusing{named{"rpc", []string{"/rpc.Service/"}}}, named{"mute", []string{"/mute/"}})
	if err != nil {
		t.Fatal(err)
	}
	refused := coffer.Errorf(coffer.EFORBIDDEN, "suspended")
	for path, want := range map[string]string{
		"/v1/files/x": "hasura refuses", "/rpc.Service/Call": "rpc refuses", "/mute/x": "hasura refuses", "/": "hasura refuses",
	} {
		w := httptest.NewRecorder()
		rt.Refuse(w, httptest.NewRequest("POST", path, nil), refused)
		if w.Code != http.StatusForbidden || w.Body.String() != want {
			t.Errorf("%s: %d %q, want 403 %q", path, w.Code, w.Body, want)
		}
	}
	w := httptest.NewRecorder()
	rt.RefuseAt(w, httptest.NewRequest("POST", "/t/a/rpc.Service/Call", nil), "/rpc.Service/Call", refused)
	if w.Body.String() != "rpc refuses" {
		t.Errorf("RefuseAt the path past a tenant prefix: %q, want the rpc face's", w.Body)
	}
	plain, _ := api.New(named{"mute", []string{"/v1/"}})
	w = httptest.NewRecorder()
	plain.Refuse(w, httptest.NewRequest("GET", "/v1/x", nil), refused)
	if w.Code != http.StatusForbidden || w.Body.String() != "suspended\n" {
		t.Errorf("no face refuses: %d %q, want 403 in plain text", w.Code, w.Body)
	}
}

// New refuses a prefix that is not a path and one that two faces claim.
func TestRouterInvalid(t *testing.T) {
	hasura := named{"hasura", []string{"/v1/"}}
	for name, faces := range map[string][]api.Face{
		"no slash":  {hasura, named{"tus", []string{"tus/"}}},
		"twice":     {hasura, named{"other", []string{"/v1/"}}},
		"no prefix": {hasura, named{"empty", []string{""}}},
	} {
		if _, err := api.New(faces[0], faces[1:]...); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	if _, err := api.New(nil); coffer.ErrorCode(err) != coffer.EINVALID {
		t.Errorf("no fallback: %v", err)
	}
}

// Dispatching allocates nothing, whichever face the path belongs to.
func TestRouterAllocs(t *testing.T) {
	hasura, s3 := &counting{prefixes: []string{"/v1/", "/healthz", "/metrics"}}, &counting{prefixes: []string{"/s3/"}}
	rt, err := api.New(hasura, &counting{prefixes: []string{"/tus/"}}, s3)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	for _, path := range []string{"/v1/files/x", "/s3/b/k", "/nope"} {
		r := httptest.NewRequest("GET", path, nil)
		if n := testing.AllocsPerRun(100, func() { rt.ServeHTTP(w, r) }); n != 0 {
			t.Errorf("%s: %v allocations per request", path, n)
		}
	}
	if hasura.n != 2*101 || s3.n != 101 { // AllocsPerRun runs once more to warm up
		t.Errorf("served %d by hasura, %d by s3", hasura.n, s3.n)
	}
}

// counting is a face that counts its requests and writes nothing.
type counting struct {
	prefixes []string
	n        int
}

func (f *counting) Prefixes() []string                           { return f.prefixes }
func (f *counting) ServeHTTP(http.ResponseWriter, *http.Request) { f.n++ }

// toyFace is a second face in its own httpserve.Frame, with its own error body:
// GET /toy/hello answers, GET /toy/panic panics.
type toyFace struct{ frame *httpserve.Frame }

// newToyFace returns the toy face, logging to log.
func newToyFace(log *slog.Logger) toyFace {
	mux := http.NewServeMux()
	m := httpserve.RouteMux{ServeMux: mux}
	m.HandleFunc("GET /toy/hello", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "toy hello "+httpserve.StateOf(r).ID)
	})
	m.HandleFunc("GET /toy/panic", func(http.ResponseWriter, *http.Request) { panic("toy face boom") })
	return toyFace{&httpserve.Frame{Routes: mux, Encode: encodeToy, IDs: httpserve.NewIDs(), Log: log,
		Access: httpserve.NewAccessLog(httpserve.AccessLogConfig{Mode: httpserve.AccessLogOn}, log), WriteTimeout: time.Minute}}
}

func (f toyFace) Prefixes() []string                               { return []string{"/toy/"} }
func (f toyFace) ServeHTTP(w http.ResponseWriter, r *http.Request) { f.frame.ServeHTTP(w, r) }

// encodeToy is the toy face's error body.
func encodeToy(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/x-toy")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "<toy-error status="+strconv.Itoa(status)+">"+msg+"</toy-error>")
}

// On coffer's own port (app's router, hasura the fallback), a path no face claims
// gets hasura's JSON 404 as before; a second face added beside it gets request
// ids, the access log and panic recovery with its own error body, logged.
func TestRouterFaces(t *testing.T) {
	m := apptest.Start(t, apptest.Config(t), app.Parts{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	own, ok := m.Handler().(api.Face)
	if !ok {
		t.Fatalf("app's handler %T is not a router of faces", m.Handler())
	}
	logPath := filepath.Join(t.TempDir(), "toy.log")
	lf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	rt, err := api.New(own, newToyFace(slog.New(slog.NewTextHandler(lf, nil))))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rt)
	defer srv.Close()
	const notFound = `{"error":{"data":null,"message":"Not Found"}}` + "\n"
	for _, base := range []string{"http://" + m.Addr().String(), srv.URL} { // coffer's port, then with the toy face
		for _, path := range []string{"/nope", "/v1/nope", "/toy"} {
			resp, body := get(t, srv.Client(), base+path)
			if resp.StatusCode != 404 || body != notFound || resp.Header.Get("Content-Type") != "application/json" ||
				resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("%s%s: %d %q %v", base, path, resp.StatusCode, body, resp.Header)
			}
		}
	}
	checkToy(t, srv, logPath)
}

// checkToy checks the toy face's answers through srv and its log.
func checkToy(t *testing.T, srv *httptest.Server, logPath string) {
	resp, body := get(t, srv.Client(), srv.URL+"/toy/hello")
	id := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 200 || id == "" || body != "toy hello "+id || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("toy hello: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get(t, srv.Client(), srv.URL+"/toy/panic")
	pid := resp.Header.Get("X-Request-Id")
	if resp.StatusCode != 500 || body != "<toy-error status=500>internal error (request id "+pid+")</toy-error>" {
		t.Errorf("toy panic: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	resp, body = get(t, srv.Client(), srv.URL+"/toy/nope")
	if resp.StatusCode != 404 || body != "<toy-error status=404>Not Found</toy-error>" {
		t.Errorf("toy 404: %d %q", resp.StatusCode, body)
	}
	logs, _ := os.ReadFile(logPath)
	for _, line := range []string{"msg=request request_id=" + id + " method=GET path=/toy/hello status=200",
		"msg=panic request_id=" + pid + ` value="toy face boom"`,
		"msg=request request_id=" + pid + " method=GET path=/toy/panic status=500"} {
		if !strings.Contains(string(logs), line) {
			t.Errorf("no %q in the toy face's log:\n%s", line, logs)
		}
	}
}
