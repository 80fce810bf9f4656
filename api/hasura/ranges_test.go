package hasura_test

import (
	"bytes"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// rangeCase is one Range header form and what coffer answers it with, for a
// representation of S bytes: 200 (header ignored), 416, or 206 with these ranges.
type rangeCase struct {
	header string // "{S}" is replaced by S, "{S+1}" by S+1, "{S-1}" by S-1, "{S+5}" by S+5
	status int
	ranges func(s int64) [][2]int64 // inclusive; for 206 only
}

func one(a, b func(s int64) int64) func(int64) [][2]int64 {
	return func(s int64) [][2]int64 { return [][2]int64{{a(s), b(s)}} }
}

func at(n int64) func(int64) int64               { return func(int64) int64 { return n } }
func fromEnd(n int64) func(int64) int64          { return func(s int64) int64 { return s - n } }
func pairs(p ...[2]int64) func(int64) [][2]int64 { return func(int64) [][2]int64 { return p } }

// rangeCases: RFC 9110 §14 as coffer applies it (see internal/httpserve/ranges.go).
var rangeCases = []rangeCase{
	{"", 200, nil},
	{"bytes=0-0", 206, one(at(0), at(0))},
	{"bytes=0-1", 206, one(at(0), at(1))},
	{"bytes=-1", 206, one(fromEnd(1), fromEnd(1))},
	{"bytes=-0", 416, nil}, // D3: a zero suffix-length is unsatisfiable
	{"bytes=0-", 206, one(at(0), fromEnd(1))},
	{"bytes={S-1}-", 206, one(fromEnd(1), fromEnd(1))},
	{"bytes={S}-", 416, nil},
	{"bytes={S+1}-", 416, nil},
	{"bytes=10-{S+5}", 206, one(at(10), fromEnd(1))},
	{"bytes=-{S+5}", 206, one(at(0), fromEnd(1))},
	{"bytes=5-2", 200, nil}, // last-pos below first-pos: invalid, ignored
	{"bytes=0-1,2-3", 206, pairs([2]int64{0, 1}, [2]int64{2, 3})},
	{"bytes=0-1, 1-2", 206, pairs([2]int64{0, 1}, [2]int64{1, 2})}, // overlapping: served as asked
	{"bytes=" + strings.Repeat("0-0,", 16) + "0-0", 200, nil},      // 17 ranges > MaxRanges
	{"bytes =0-1", 200, nil},                                       // no whitespace before "="
	{"Bytes=0-1", 206, one(at(0), at(1))},                          // units are case-insensitive
	{"BYTES=-0,0-1", 206, one(at(0), at(1))},
	{"bytes=--1", 200, nil},
	{"bytes=1--2", 200, nil},
	{"items=0-1", 200, nil}, // D8: an unknown unit is ignored
	{"none", 200, nil},
	{"bytes=", 200, nil},
	{"bytes=,", 200, nil},
	{"bytes=99999999999999999999-", 416, nil},
	{"bytes=0-99999999999999999999", 206, one(at(0), fromEnd(1))},
	{"bytes=-99999999999999999999", 206, one(at(0), fromEnd(1))},
	{"bytes=99999999999999999999-,0-0", 206, one(at(0), at(0))},
	{"bytes=-0,0-1", 206, one(at(0), at(1))},
	{"bytes=0-0,-0", 206, one(at(0), at(0))},
	{"bytes={S}-,-0", 416, nil},
	{"bytes=,0-1,", 206, one(at(0), at(1))},
	{"bytes= 0-1 ,\t2-3", 206, pairs([2]int64{0, 1}, [2]int64{2, 3})},
	{"bytes=0 - 1", 200, nil},
	{"bytes=a-b", 200, nil},
	{"bytes=0", 200, nil},
	{"bytes=0-1;x", 200, nil},
	{"bytes=+1-2", 200, nil},
	{"bytes=-+1", 200, nil},
	{"bytes=0x10-", 200, nil},
}

// expand fills the size placeholders of a case's header.
func (c rangeCase) expand(s int64) string {
	return strings.NewReplacer("{S}", fmt.Sprint(s), "{S+1}", fmt.Sprint(s+1), "{S-1}", fmt.Sprint(s-1),
		"{S+5}", fmt.Sprint(s+5)).Replace(c.header)
}

// checkRange sends one case and checks status, Content-Range and the bytes.
func checkRange(t *testing.T, e *env, method, path string, data []byte, c rangeCase, hdr ...string) {
	t.Helper()
	s := int64(len(data))
	rng := c.expand(s)
	resp := e.do(method, path, nil, false, append(hdr, "Range", rng)...)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	cr := resp.Header.Get("Content-Range")
	if resp.StatusCode != c.status {
		t.Errorf("%s %q: status %d (Content-Range %q), want %d", method, rng, resp.StatusCode, cr, c.status)
		return
	}
	if method == http.MethodHead {
		body = nil
	}
	switch c.status {
	case 200:
		if cr != "" || (method == http.MethodGet && !bytes.Equal(body, data)) {
			t.Errorf("%s %q: 200 with Content-Range %q and %d bytes, want the whole %d", method, rng, cr, len(body), s)
		}
	case 416:
		if want := fmt.Sprintf("bytes */%d", s); cr != want {
			t.Errorf("%s %q: 416 Content-Range %q, want %q", method, rng, cr, want)
		}
	case 206:
		checkPartial(t, method, rng, resp, body, data, c.ranges(s))
	}
}

// checkPartial checks a 206 answer: one range in Content-Range, or a multipart body.
func checkPartial(t *testing.T, method, rng string, resp *http.Response, body, data []byte, want [][2]int64) {
	t.Helper()
	s := int64(len(data))
	if len(want) == 1 {
		w := want[0]
		if cr := resp.Header.Get("Content-Range"); cr != fmt.Sprintf("bytes %d-%d/%d", w[0], w[1], s) {
			t.Errorf("%s %q: Content-Range %q, want %v of %d", method, rng, cr, w, s)
		}
		if method == http.MethodGet && !bytes.Equal(body, data[w[0]:w[1]+1]) {
			t.Errorf("%s %q: %d bytes, not bytes %v", method, rng, len(body), w)
		}
		return
	}
	if method != http.MethodGet {
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "multipart/byteranges" {
			t.Errorf("%s %q: Content-Type %q, want multipart/byteranges", method, rng, mt)
		}
		return
	}
	crs, parts, err := byteRanges(resp, body)
	if err != nil || len(parts) != len(want) {
		t.Errorf("%s %q: %d parts (%v), want %d", method, rng, len(parts), err, len(want))
		return
	}
	for i, w := range want {
		if crs[i] != fmt.Sprintf("bytes %d-%d/%d", w[0], w[1], s) || !bytes.Equal(parts[i], data[w[0]:w[1]+1]) {
			t.Errorf("%s %q: part %d is %q (%d bytes), want %v", method, rng, i, crs[i], len(parts[i]), w)
		}
	}
}

// byteRanges reads a multipart/byteranges answer: each part's Content-Range and bytes.
func byteRanges(resp *http.Response, body []byte) (crs []string, parts [][]byte, err error) {
	mt, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt != "multipart/byteranges" {
		return nil, nil, fmt.Errorf("Content-Type %q", mt)
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return crs, parts, nil
		}
		if err != nil {
			return crs, parts, err
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return crs, parts, err
		}
		crs, parts = append(crs, p.Header.Get("Content-Range")), append(parts, b)
	}
}

// TestRangeForms runs every Range form against a 1 MiB file, by GET (the first
// request reads the blob, the next ones come from the content cache), by HEAD and
// through a presigned URL. Before the fix: "bytes=-0" got 206 with Content-Range
// "bytes 1048576-1048575/1048576" (D3), "items=0-1" got 416 (D8).
func TestRangeForms(t *testing.T) {
	e := newEnv(t)
	data := content(1 << 20)
	f := e.uploadOne("default", "range.bin", data)
	path := "/v1/files/" + f.ID
	admin := []string{"X-Hasura-Admin-Secret", adminSecret}
	var presigned struct{ URL string }
	mustStatus(t, e.do("GET", path+"/presignedurl", nil, true), http.StatusOK, &presigned)
	signed := strings.TrimPrefix(presigned.URL, e.srv.URL)
	for _, c := range rangeCases {
		for range 2 { // cold, then cached
			checkRange(t, e, http.MethodGet, path, data, c, admin...)
		}
		checkRange(t, e, http.MethodHead, path, data, c, admin...)
		checkRange(t, e, http.MethodGet, signed, data, c)
	}
}

// TestRangeFormsSmallAndEmpty: a file smaller than the ranges asked, and an empty
// file, whose Range headers are always ignored (nothing can be partial of nothing).
func TestRangeFormsSmallAndEmpty(t *testing.T) {
	e := newEnv(t)
	mustStatus(t, e.do("PATCH", "/v1/buckets/default", strings.NewReader(`{"minUploadFileSize":0}`), true), http.StatusOK, nil)
	small := []byte("hello")
	sf := e.uploadOne("default", "small.txt", small)
	for _, c := range rangeCases {
		if c.status == 206 && c.ranges(int64(len(small)))[0][0] >= int64(len(small)) {
			continue // "bytes=10-{S+5}" starts past a small file's end
		}
		checkRange(t, e, http.MethodGet, "/v1/files/"+sf.ID, small, c, "X-Hasura-Admin-Secret", adminSecret)
	}
	ef := e.uploadOne("default", "empty.txt", nil)
	for _, c := range rangeCases {
		resp := e.do("GET", "/v1/files/"+ef.ID, nil, true, "Range", c.expand(0))
		if b := mustStatus(t, resp, http.StatusOK, nil); len(b) != 0 || resp.Header.Get("Content-Range") != "" {
			t.Errorf("empty file, %q: %d bytes, Content-Range %q", c.expand(0), len(b), resp.Header.Get("Content-Range"))
		}
	}
}

// TestRangeFormsVariant runs every Range form against a transformed image, whose
// bytes come from the variant cache in memory.
func TestRangeFormsVariant(t *testing.T) {
	e, path, _ := imageEnv(t)
	path += "?w=300"
	data := mustStatus(t, e.do("GET", path, nil, true), http.StatusOK, nil)
	for _, c := range rangeCases {
		checkRange(t, e, http.MethodGet, path, data, c, "X-Hasura-Admin-Secret", adminSecret)
	}
}

// A precondition still takes precedence over an unsatisfiable range (RFC 9110
// §13.2.2): If-None-Match with the current ETag is 304, If-Match with another 412;
// and If-Range with a stale validator sends the whole file instead of a 416.
func TestRangeAfterPreconditions(t *testing.T) {
	e := newEnv(t)
	f := e.uploadOne("default", "p.bin", content(1000))
	path := "/v1/files/" + f.ID
	resp := e.do("GET", path, nil, true, "Range", "bytes=-0", "If-None-Match", f.ETag)
	mustStatus(t, resp, http.StatusNotModified, nil)
	resp = e.do("GET", path, nil, true, "Range", "bytes=-0", "If-Match", `"other"`)
	mustStatus(t, resp, http.StatusPreconditionFailed, nil)
	resp = e.do("GET", path, nil, true, "Range", "bytes=-0", "If-Range", `"stale"`)
	if b := mustStatus(t, resp, http.StatusOK, nil); len(b) != 1000 {
		t.Fatalf("If-Range stale: %d bytes", len(b))
	}
	resp = e.do("GET", path, nil, true, "Range", "bytes=-0", "If-Range", f.ETag)
	mustError(t, resp, http.StatusRequestedRangeNotSatisfiable)
}
