package hostile

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// TestHostileNames uploads (metadata[] name, legacy header, multipart filename) and
// renames files with at least 500 generated hostile names: no 5xx, names coffer must
// refuse are refused, every accepted name reads back exactly (in NFC) from the upload
// answer, the metadata, the listing and the download's Content-Disposition, which
// never holds CR, LF or a bare quote; and nothing lands on disk outside the data dir.
func TestHostileNames(t *testing.T) {
	s := newServer(t)
	tl := s.tally("names")
	names := hostileNames(600)
	spare := s.mustUpload("alice", "priv", "spare", []byte("x"))
	accepted := map[string]string{} // file id → the name it must have
	for i, name := range names {
		what := fmt.Sprintf("name %d %+q", i, name)
		a := s.uploadNamed("alice", "priv", "", name, []byte("x"))
		if id := s.checkNamed(tl, what+" (metadata[])", name, a); id != "" {
			accepted[id] = norm.NFC.String(name)
		}
		s.checkLegacy(tl, what+" (X-Nhost-File-Name)", name, accepted)
		s.checkFilename(tl, what+" (filename)", name)
		b, _ := json.Marshal(map[string]json.RawMessage{"name": json.RawMessage(jsonString(name))})
		a = s.do("PATCH", "/v1/files/"+spare+"/metadata", strings.NewReader(string(b)), append(as("alice"), "Content-Type", "application/json")...)
		if s.checkNamed(tl, what+" (rename)", name, a) != "" {
			accepted[spare] = norm.NFC.String(name)
		}
	}
	s.checkListing(tl, accepted)
	checkDisk(t, s)
	t.Logf("%d names, %d accepted", len(names), len(accepted))
}

// checkNamed checks an upload's or rename's answer for name and, if it was
// accepted, reads the file back; it returns the accepted file's id.
func (s *server) checkNamed(tl *tally, what, name string, a answer) string {
	s.t.Helper()
	refuse := mustRefuse(name)
	var id, got string
	if fs := uploaded(a); len(fs) == 1 {
		id, got = fs[0].ID, fs[0].Name
	} else if a.status < 300 {
		var f fileJSON // a rename's or a legacy upload's answer
		json.Unmarshal(a.body, &f)
		id, got = f.ID, f.Name
	}
	wrong := ""
	switch {
	case id == "" && a.status < 300:
		wrong = "answered without the file"
	case id != "" && refuse != "":
		wrong = "accepted a name to refuse: " + refuse
	case id == "" && slices.Contains(benignNames, name):
		wrong = "refused a benign name"
	case id != "" && got != norm.NFC.String(name):
		wrong = fmt.Sprintf("stored as %+q", got)
	case id == "" && a.status != http.StatusBadRequest:
		wrong = "refused, but not with 400"
	}
	tl.probe(what, a, wrong)
	if id != "" {
		s.readBack(tl, what, id, norm.NFC.String(name))
	}
	return id
}

// readBack checks the metadata and the download of an accepted name.
func (s *server) readBack(tl *tally, what, id, want string) {
	a := s.do("GET", "/v1/files/"+id+"/metadata", nil, as("alice")...)
	var f fileJSON
	json.Unmarshal(a.body, &f)
	wrong := ""
	if a.status == http.StatusOK && f.Name != want {
		wrong = fmt.Sprintf("metadata name %+q", f.Name)
	}
	tl.probe(what+" metadata", a, wrong)
	a = s.do("GET", "/v1/files/"+id, nil, as("alice")...)
	tl.probe(what+" download", a, dispositionProblem(a.header.Get("Content-Disposition"), want))
}

// dispositionProblem says what is wrong with a download's Content-Disposition for a
// file named want ("" if nothing): it must hold no CR or LF, quote a filename with
// no quote or backslash inside, and that filename must decode back to want.
func dispositionProblem(cd, want string) string {
	if strings.ContainsAny(cd, "\r\n") {
		return fmt.Sprintf("Content-Disposition %q holds CR or LF", cd)
	}
	_, rest, ok := strings.Cut(cd, `; filename="`)
	if !ok || !strings.HasSuffix(rest, `"`) {
		return fmt.Sprintf("Content-Disposition %q has no quoted filename", cd)
	}
	inner := strings.TrimSuffix(rest, `"`)
	if strings.ContainsAny(inner, "\"\\") {
		return fmt.Sprintf("Content-Disposition %q has a quote or backslash in the filename", cd)
	}
	if got, err := url.QueryUnescape(inner); err != nil || got != want {
		return fmt.Sprintf("Content-Disposition %q decodes to %+q", cd, got)
	}
	return ""
}

// checkLegacy uploads with the pre-0.2 form, the name in X-Nhost-File-Name (names a
// header cannot carry as they are are not tried).
func (s *server) checkLegacy(tl *tally, what, name string, accepted map[string]string) {
	if strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 || strings.TrimSpace(name) != name {
		return // a header value has no control characters, and no spaces at its ends (RFC 9110 §5.5)
	}
	body, ctype := multipartBody(part{field: "file", filename: "f.bin", body: []byte("x")})
	a := s.do("POST", "/v1/files", body, append(as("alice"), "Content-Type", ctype, "X-Nhost-Bucket-Id", "priv", "X-Nhost-File-Name", name)...)
	if id := s.checkNamed(tl, what, name, a); id != "" {
		accepted[id] = norm.NFC.String(name)
	}
}

// checkFilename uploads with the name only as the file part's filename, which
// coffer reduces to its last path element: an accepted one must still be a name
// coffer would accept; the file is deleted again.
func (s *server) checkFilename(tl *tally, what, name string) {
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte("priv")}, part{field: "file[]", filename: name, body: []byte("x")})
	a := s.do("POST", "/v1/files", body, append(as("alice"), "Content-Type", ctype)...)
	wrong := ""
	fs := uploaded(a)
	if len(fs) == 1 && mustRefuse(fs[0].Name) != "" {
		wrong = fmt.Sprintf("stored as %+q: %s", fs[0].Name, mustRefuse(fs[0].Name))
	}
	tl.probe(what, a, wrong)
	if len(fs) == 1 {
		tl.probe(what+" cleanup", s.do("DELETE", "/v1/files/"+fs[0].ID, nil, as("alice")...), "")
	}
}

// checkListing lists bucket priv and checks every accepted file has its name there.
func (s *server) checkListing(tl *tally, accepted map[string]string) {
	listed := map[string]string{}
	for cursor := ""; ; {
		a := s.do("GET", "/v1/buckets/priv/files?limit=1000&cursor="+url.QueryEscape(cursor), nil, as("alice")...)
		var page struct {
			Files      []fileJSON `json:"files"`
			NextCursor string     `json:"nextCursor"`
		}
		json.Unmarshal(a.body, &page)
		tl.probe("listing", a, "")
		for _, f := range page.Files {
			listed[f.ID] = f.Name
		}
		if cursor = page.NextCursor; cursor == "" || a.status != http.StatusOK {
			break
		}
	}
	for id, want := range accepted {
		if listed[id] != want {
			tl.probe("listing "+id, answer{status: http.StatusOK}, fmt.Sprintf("listed as %+q, want %+q", listed[id], want))
		}
	}
}

// checkDisk walks the test's temp dir and the system temp dir: every file the
// server wrote is under its data dir, and no path anywhere holds the mark.
func checkDisk(t *testing.T, s *server) {
	t.Helper()
	filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Errorf("walk %s: %v", p, err)
			return nil
		}
		if p != s.root && p != s.data && !strings.HasPrefix(p, s.data+string(filepath.Separator)) {
			t.Errorf("%s is outside the data dir %s", p, s.data)
		}
		if strings.Contains(p, mark) {
			t.Errorf("%s holds a name from a request", p)
		}
		return nil
	})
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if strings.Contains(e.Name(), mark) {
			t.Errorf("%s in the system temp dir holds a name from a request", e.Name())
		}
	}
	for _, p := range []string{"/etc/" + mark, "/" + mark} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
}
