package rpcapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// postJSON calls procedure (e.g. "FileService/ListFiles") with the Connect protocol
// in JSON, as the console does with fetch, and returns the status, the decoded body
// and the response's header.
func (e *env) postJSON(hc *http.Client, procedure, body string) (int, map[string]any, http.Header) {
	e.t.Helper()
	r, _ := http.NewRequest(http.MethodPost, e.base+"/coffer.admin.v1."+procedure, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&out); err != nil {
		e.t.Fatalf("%s: %d %q: %v", procedure, resp.StatusCode, b, err)
	}
	return resp.StatusCode, out, resp.Header
}

// strs returns the strings of a JSON array (nil if absent).
func strs(v any) []string {
	var out []string
	for _, x := range asList(v) {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func asList(v any) []any { l, _ := v.([]any); return l }

// listAllJSON pages through ListFiles in JSON with pageSize and returns its entries,
// files by name and prefixes, as one listing (each page is merged by name).
func (e *env) listAllJSON(hc *http.Client, bucket, prefix string, pageSize int) []string {
	e.t.Helper()
	var got []string
	token := ""
	for range 100 {
		body, _ := json.Marshal(map[string]any{"bucketId": bucket, "prefix": prefix, "delimiter": "/", "pageSize": pageSize, "pageToken": token})
		code, out, hdr := e.postJSON(hc, "FileService/ListFiles", string(body))
		if code != http.StatusOK {
			e.t.Fatalf("ListFiles: %d %v", code, out)
		}
		if st := hdr.Get("Server-Timing"); !strings.Contains(st, "app;dur=") || !strings.Contains(st, "meta;dur=") {
			e.t.Errorf("ListFiles: Server-Timing %q, want app and meta durations", st)
		}
		var page []string
		for _, f := range asList(out["files"]) {
			page = append(page, f.(map[string]any)["name"].(string))
		}
		page = append(page, strs(out["prefixes"])...)
		slices.Sort(page)
		if len(page) > pageSize {
			e.t.Fatalf("a page of %d entries for pageSize %d: %q", len(page), pageSize, page)
		}
		got = append(got, page...)
		if token, _ = out["nextPageToken"].(string); token == "" {
			return got
		}
	}
	e.t.Fatal("listing does not end")
	return nil
}

// TestListFilesDelimiter: ListFiles with delimiter "/" in Connect JSON lists a
// bucket like folders, page by page, with each caller's read rule deciding which
// prefixes it sees; another delimiter is INVALID_ARGUMENT.
func TestListFilesDelimiter(t *testing.T) {
	e := newEnv(t)
	e.docsWithRules(t)
	u1, u2 := asUser(t, "u1"), asUser(t, "u2")
	for _, n := range []string{"a/1", "b/x/1", "top", "a.txt"} {
		e.upload(u1, "docs", n, "x")
	}
	for _, n := range []string{"c/1", "b/y/2", "a0"} {
		e.upload(u2, "docs", n, "x")
	}
	for _, tc := range []struct {
		who    string
		hc     *http.Client
		prefix string
		want   string
	}{
		{"admin", asAdmin(), "", "a.txt a/ a0 b/ c/ top"},
		{"u1", u1, "", "a.txt a/ b/ top"},
		{"u2", u2, "", "a0 b/ c/"},
		{"admin", asAdmin(), "b/", "b/x/ b/y/"},
		{"u1", u1, "b/", "b/x/"},
		{"u2", u2, "a/", ""},
	} {
		for _, size := range []int{1, 2, 100} {
			if got := strings.Join(e.listAllJSON(tc.hc, "docs", tc.prefix, size), " "); got != tc.want {
				t.Errorf("%s lists %q by %d: %q, want %q", tc.who, tc.prefix, size, got, tc.want)
			}
		}
	}
	code, out, hdr := e.postJSON(asAdmin(), "FileService/ListFiles", `{"bucketId":"docs","delimiter":"."}`)
	if code != http.StatusBadRequest || out["code"] != "invalid_argument" {
		t.Errorf("delimiter \".\": %d %v", code, out)
	}
	if st := hdr.Get("Server-Timing"); !strings.Contains(st, "app;dur=") {
		t.Errorf("an error's Server-Timing %q", st)
	}
}
