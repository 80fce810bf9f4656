package hostile

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// rangeSize is the size of the file the Range forms ask for (the 1 MiB).
const rangeSize = 1 << 20

// Range expectations: the answer RFC 9110 requires, or only a consistent one.
const (
	anyAnswer     = iota // no 5xx; 200, 206 or 416 consistent with the body
	partial              // 206 with bytes first..last
	whole                // 200 with the whole file
	unsatisfiable        // 416 with Content-Range bytes */size
)

// rangeForm is one Range request and what it must get.
type rangeForm struct {
	hdr         []string // header pairs
	want        int
	first, last int64 // for partial
}

// rangeForms returns the Range requests for a rangeSize file.
func rangeForms() []rangeForm {
	n := int64(rangeSize)
	r := func(v string, want int, bounds ...int64) rangeForm {
		f := rangeForm{hdr: []string{"Range", v}, want: want}
		if len(bounds) == 2 {
			f.first, f.last = bounds[0], bounds[1]
		}
		return f
	}
	many := strings.TrimSuffix(strings.Repeat("0-0,", 20), ",")
	return []rangeForm{
		r("bytes=0-0", partial, 0, 0), r("bytes=0-1", partial, 0, 1), r("bytes=0-", partial, 0, n-1),
		r("bytes=-1", partial, n-1, n-1), r(fmt.Sprintf("bytes=-%d", n), partial, 0, n-1),
		r("bytes=-2000000", partial, 0, n-1), r(fmt.Sprintf("bytes=%d-", n-1), partial, n-1, n-1),
		r(fmt.Sprintf("bytes=0-%d", n-1), partial, 0, n-1), r("bytes=0-99999999", partial, 0, n-1),
		r("bytes=1000-1999", partial, 1000, 1999),
		r("bytes=-0", unsatisfiable), r(fmt.Sprintf("bytes=%d-", n), unsatisfiable),
		r(fmt.Sprintf("bytes=%d-%d", n, n+1), unsatisfiable), r("bytes=9223372036854775807-", unsatisfiable),
		r("items=0-1", whole), r("none", anyAnswer), r("bytes="+many, whole),
		{hdr: []string{"Range", "bytes=0-1", "If-Range", `"not-the-etag"`}, want: whole},
		r("bytes=1-0", anyAnswer), r("bytes=--1", anyAnswer), r("bytes=-", anyAnswer), r("bytes=", anyAnswer),
		r("bytes=a-b", anyAnswer), r("bytes=0x0-1", anyAnswer), r("bytes=+0-1", anyAnswer), r("bytes=0-1-", anyAnswer),
		r("bytes=1.5-2", anyAnswer), r("BYTES=0-1", anyAnswer), r("bytes =0-1", anyAnswer), r("bytes= 0-1", anyAnswer),
		r("bytes=0-18446744073709551616", anyAnswer), r("bytes=-9223372036854775808", anyAnswer),
		r("bytes=0-1,2-3", anyAnswer), r("bytes=0-1,0-1", anyAnswer), r("bytes=0-0,-1", anyAnswer),
		r("bytes=0-1,,", anyAnswer), r("bytes=,0-1", anyAnswer), r("bytes=0-1, 5-6", anyAnswer),
		r(fmt.Sprintf("bytes=0-1,%d-", n), anyAnswer), r("bytes=\x00-1", anyAnswer),
	}
}

// TestRangeForms sends (as raw HTTP/1.1, so any byte goes) every Range form for a 1 MiB file: the satisfiable ones get
// their bytes, bytes=-0 and ranges past the end 416, an unknown unit the whole file
// (RFC 9110 §14.2), and every other answer is no 5xx and consistent: a 206's
// Content-Range (or each part's, for multipart/byteranges) matches its bytes.
func TestRangeForms(t *testing.T) {
	s := newServer(t)
	tl := s.tally("range")
	content := make([]byte, rangeSize)
	rng := rand.New(rand.NewPCG(15, 8))
	for i := range content {
		content[i] = byte(rng.Uint32())
	}
	id := s.mustUpload("alice", "priv", "r.bin", content)
	for _, f := range rangeForms() {
		for _, method := range []string{"GET", "HEAD"} {
			a := s.rawDo(method, "/v1/files/"+id, append(as("alice"), f.hdr...)...)
			if method == "HEAD" {
				tl.probe(fmt.Sprintf("HEAD %q", f.hdr), a, headProblem(a))
				continue
			}
			tl.probe(fmt.Sprintf("GET %q", f.hdr), a, rangeProblem(f, a, content))
		}
	}
}

// headProblem says what is wrong with a HEAD answer: a body.
func headProblem(a answer) string {
	if len(a.body) > 0 {
		return "HEAD answered with a body"
	}
	return ""
}

// rangeProblem says what is wrong with a's answer to f ("" if nothing).
func rangeProblem(f rangeForm, a answer, content []byte) string {
	size := int64(len(content))
	switch {
	case f.want == partial && a.status != http.StatusPartialContent:
		return "want 206"
	case f.want == whole && a.status != http.StatusOK:
		return "want 200 with the whole file"
	case f.want == unsatisfiable && a.status != http.StatusRequestedRangeNotSatisfiable:
		return fmt.Sprintf("want 416; Content-Range %q, %d bytes", a.header.Get("Content-Range"), len(a.body))
	}
	switch a.status {
	case http.StatusOK:
		if !bytes.Equal(a.body, content) {
			return fmt.Sprintf("200 with %d bytes, not the file", len(a.body))
		}
	case http.StatusRequestedRangeNotSatisfiable: // for a malformed Range, Content-Range may be missing
		if cr := a.header.Get("Content-Range"); (cr != "" || f.want == unsatisfiable) && cr != fmt.Sprintf("bytes */%d", size) {
			return fmt.Sprintf("416 with Content-Range %q", cr)
		}
	case http.StatusPartialContent:
		return partialProblem(f, a, content)
	default: // another refusal (400 for a header no server may take) is fine; 5xx are counted apart
		if a.status < 400 {
			return "unexpected status"
		}
	}
	return ""
}

// partialProblem checks a 206: one range, or multipart/byteranges.
func partialProblem(f rangeForm, a answer, content []byte) string {
	mt, params, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
	if mt != "multipart/byteranges" {
		first, last, msg := checkRange(a.header.Get("Content-Range"), a.body, content)
		if msg == "" && f.want == partial && (first != f.first || last != f.last) {
			msg = fmt.Sprintf("bytes %d-%d, want %d-%d", first, last, f.first, f.last)
		}
		return msg
	}
	mr := multipart.NewReader(bytes.NewReader(a.body), params["boundary"])
	parts := 0
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "malformed multipart/byteranges: " + err.Error()
		}
		body, _ := io.ReadAll(p)
		if _, _, msg := checkRange(p.Header.Get("Content-Range"), body, content); msg != "" {
			return "part: " + msg
		}
		parts++
	}
	if parts == 0 {
		return "multipart/byteranges without parts"
	}
	return ""
}

// checkRange parses "bytes first-last/size" and checks body is those bytes.
func checkRange(cr string, body, content []byte) (first, last int64, msg string) {
	spec, ok := strings.CutPrefix(cr, "bytes ")
	rng, size, ok2 := strings.Cut(spec, "/")
	a, b, ok3 := strings.Cut(rng, "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	switch {
	case !ok || !ok2 || !ok3 || err1 != nil || err2 != nil || size != strconv.Itoa(len(content)):
		return 0, 0, fmt.Sprintf("Content-Range %q", cr)
	case first < 0 || last < first || last >= int64(len(content)):
		return 0, 0, fmt.Sprintf("Content-Range %q is outside the file", cr)
	case !bytes.Equal(body, content[first:last+1]):
		return 0, 0, fmt.Sprintf("Content-Range %q with %d other bytes", cr, len(body))
	}
	return first, last, ""
}
