package hostile

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/imagingtest"
	"github.com/coffer/coffer/internal/apptest"
)

const (
	adminSecret = "hostile-admin-secret"
	jwtKey      = "hostile-suite-hs256-key-of-at-least-32-bytes"
	presignKey  = "hostile-presign-key-of-32-bytes!"
	ownerRule   = `{uploaded_by_user_id: {_eq: X-Hasura-User-Id}}`
)

// rules let role "user" upload into every bucket of the suite and read, replace and
// delete only the files it uploaded: every user is granted every action somewhere,
// so a refusal must look like a missing file.
const rules = `
rules:
  - role: user
    buckets: [default, priv, inline, signed]
    upload: {presets: {uploaded_by_user_id: X-Hasura-User-Id}}
    read: {filter: ` + ownerRule + `}
    replace: {filter: ` + ownerRule + `}
    delete: {filter: ` + ownerRule + `}
`

// imagerPath is the coffer-imager built by TestMain, "" without libvips.
var imagerPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "coffer-hostile")
	if err != nil {
		panic(err)
	}
	if imagerPath, err = imagingtest.BuildImager(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	fmt.Println(overall.line("overall"))
	os.RemoveAll(dir)
	os.Exit(code)
}

// server is coffer as `coffer serve` runs it, over SQLite and disk blobs in
// root/data, on loopback, with the real coffer-imager when libvips is installed; its
// log counts the panics the handler's recovery caught.
type server struct {
	t       *testing.T
	url     string
	client  *http.Client
	root    string // a temp dir; the server writes only under root/data
	data    string
	signer  *auth.Signer
	panics  *atomic.Int64
	errLogs *atomic.Int64 // ERROR records: internal errors are logged once
	images  bool
	host    string // the Host header of do and rawDo; "" = the listen address
}

// newServer starts a server with the suite's rules and buckets: default, priv
// (private), inline (allowInline) and signed (presigned URLs on). It is wired as
// `coffer serve` wires it (app.New), with webhooks allowed to loopback and resolving
// no names, and image transformations without a cost budget.
func newServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t, "", nil)
	for _, b := range []string{`{"id":"priv"}`, `{"id":"inline","allowInline":true}`, `{"id":"signed","presignedUrlsEnabled":true}`} {
		s.mustStatus(http.StatusCreated, "POST", "/v1/buckets", strings.NewReader(b), s.admin()...)
	}
	return s
}

// startServer starts a server with the suite's settings changed by tweak (nil: as
// they are), answering do and rawDo as host ("" = its listen address).
func startServer(t *testing.T, host string, tweak func(*app.Config)) *server {
	t.Helper()
	root := t.TempDir()
	s := &server{t: t, root: root, data: filepath.Join(root, "data"), panics: new(atomic.Int64), errLogs: new(atomic.Int64), host: host}
	log := slog.New(&countingLog{panics: s.panics, errors: s.errLogs})
	cfg, parts := s.config()
	if tweak != nil {
		tweak(&cfg)
	}
	apptest.Start(t, cfg, parts, log)
	s.url = cfg.PublicURL
	s.client = &http.Client{Timeout: time.Minute, Transport: &http.Transport{},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }} // the server's answer, as it is
	t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// config returns the suite's server settings, on a free loopback port.
func (s *server) config() (app.Config, app.Parts) {
	cfg := apptest.Config(s.t)
	cfg.DataDir, cfg.RulesFile = s.data, filepath.Join(s.t.TempDir(), "rules.yaml") // not under root
	if err := os.WriteFile(cfg.RulesFile, []byte(rules), 0o600); err != nil {
		s.t.Fatal(err)
	}
	cfg.AdminSecret, cfg.JWTSecret = adminSecret, `{"type":"HS256","key":"`+jwtKey+`"}`
	cfg.Webhooks.AllowNetworks = []string{"127.0.0.0/8"}
	var err error
	if s.signer, err = auth.NewSigner("k1", map[string][]byte{"k1": []byte(presignKey)}); err != nil {
		s.t.Fatal(err)
	}
	parts := app.Parts{Resolver: noDNS{}, Signer: s.signer}
	// No cost budget: the abandoned expensive transformations must really run (and be
	// killed), not be refused before any work; the bombs meet the pixel limits.
	cfg.ImageWorker, cfg.ImageWorkers, cfg.ImageQueue, cfg.ImageMaxCost = imagerPath, 2, 16, 1<<62
	if s.images = imagerPath != ""; !s.images {
		parts.Images = imaging.NewDisabled("libvips is not installed")
	}
	return cfg, parts
}

// noDNS resolves nothing: the suite never asks the system resolver.
type noDNS struct{}

func (noDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	return nil, &net.DNSError{Err: "no such host (the suite resolves nothing)", Name: host, IsNotFound: true}
}

// countingLog discards records but counts the handler's recovered panics and the
// ERROR records.
type countingLog struct {
	panics, errors *atomic.Int64
	attrs          []slog.Attr
}

func (l *countingLog) Enabled(context.Context, slog.Level) bool { return true }
func (l *countingLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingLog{panics: l.panics, errors: l.errors, attrs: append(l.attrs[:len(l.attrs):len(l.attrs)], as...)}
}
func (l *countingLog) WithGroup(string) slog.Handler { return l }
func (l *countingLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		l.errors.Add(1)
	}
	if r.Message == "panic" || strings.Contains(r.Message, "panic serving") {
		l.panics.Add(1)
	}
	return nil
}

// token returns a signed HS256 token for role "user" and user id user.
func token(user string) string { return signToken(jwtKey, user) }

// admin returns the admin secret header; as returns a user's bearer token header.
func (s *server) admin() []string { return []string{"X-Hasura-Admin-Secret", adminSecret} }
func as(user string) []string     { return []string{"Authorization", "Bearer " + token(user)} }

// gaveUp is the status of an answer the client stopped waiting for.
const gaveUp = -1

// answer is a response read in full; status 0 is a transport error (in body).
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request (headers as name, value pairs) and reads the whole answer.
func (s *server) do(method, path string, body io.Reader, hdr ...string) answer {
	s.t.Helper()
	return s.doAt(s.host, method, path, body, hdr...)
}

// doAt is do with Host host ("" = the listen address).
func (s *server) doAt(host, method, path string, body io.Reader, hdr ...string) answer {
	s.t.Helper()
	req, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		s.t.Fatalf("%s %q: %v", method, path, err)
	}
	req.Host = host
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return s.send(req)
}

// send sends req and reads the whole answer.
func (s *server) send(req *http.Request) answer { return readAnswer(s.client.Do(req)) }

// readAnswer reads a response in full.
func readAnswer(resp *http.Response, err error) answer {
	if err != nil {
		return answer{body: []byte(err.Error())}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{status: resp.StatusCode, header: resp.Header, body: []byte("reading the body: " + err.Error())}
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// mustStatus sends a request that must answer want.
func (s *server) mustStatus(want int, method, path string, body io.Reader, hdr ...string) answer {
	s.t.Helper()
	a := s.do(method, path, body, hdr...)
	if a.status != want {
		s.t.Fatalf("%s %s: %d, want %d: %s", method, path, a.status, want, bytes.TrimSpace(a.body))
	}
	return a
}

// rawDo sends a body-less request as raw HTTP/1.1 on a new connection, so that
// headers and the path may hold any byte a client library would refuse.
func (s *server) rawDo(method, target string, hdr ...string) answer {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, s.hostHeader())
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	b.WriteString("\r\n")
	return s.raw(method, b.String())
}

// hostHeader is the Host the suite's requests carry.
func (s *server) hostHeader() string {
	if s.host != "" {
		return s.host
	}
	return strings.TrimPrefix(s.url, "http://")
}

// raw writes req on a new connection and reads one answer to method.
func (s *server) raw(method, req string) answer {
	c := s.dial()
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, req); err != nil {
		return answer{body: []byte(err.Error())}
	}
	return readAnswer(http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method}))
}

// stored is what the server holds: blob objects (image variants aside), temp files
// and each bucket's files.
type stored struct {
	objects, temps int
	files          map[string]int
	orphans        string // list-orphans and list-not-uploaded answers
}

// stored counts what the server holds, as its admin and on disk.
func (s *server) stored() stored {
	s.t.Helper()
	st := stored{files: map[string]int{}}
	objects := filepath.Join(s.data, "blobs", "objects")
	st.objects = countFiles(objects) - countFiles(filepath.Join(objects, "v")) // variants come and go
	st.temps = countFiles(filepath.Join(s.data, "blobs", "tmp"))
	for _, b := range []string{"default", "priv", "inline", "signed"} {
		var page struct {
			Files []fileJSON `json:"files"`
		}
		json.Unmarshal(s.mustStatus(http.StatusOK, "GET", "/v1/buckets/"+b+"/files?limit=1000", nil, s.admin()...).body, &page)
		st.files[b] = len(page.Files)
	}
	for _, op := range []string{"list-orphans", "list-not-uploaded"} {
		st.orphans += string(bytes.TrimSpace(s.mustStatus(http.StatusOK, "POST", "/v1/ops/"+op, nil, s.admin()...).body))
	}
	return st
}

// countFiles counts the regular files under dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// unchanged waits (up to 10 s, for aborted requests to be cleaned up) until what the
// server holds is before again, and says how it differs if it never is.
func (s *server) unchanged(before stored) string {
	s.t.Helper()
	var now stored
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if now = s.stored(); reflect.DeepEqual(now, before) {
			return ""
		}
	}
	return fmt.Sprintf("the server holds %+v, before %+v", now, before)
}
