package httpserve

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// Range requests (RFC 9110 §14) are read here (ApplyRange) before http.ServeContent sees them,
// because ServeContent's parser answers some forms against the RFC: a suffix of 0
// bytes ("bytes=-0") is served as an empty 206 instead of refused, a unit it does not
// know ("items=0-1") and a syntax error ("bytes=5-2") get 416 where the header must
// (unknown unit) or may (invalid syntax) be ignored, "Bytes=" (units are
// case-insensitive) is refused, and a position beyond int64 gets 416 instead of
// being read as "past the end". The rules coffer applies, for every route that
// serves bytes (files, presigned URLs, transformed images; GET and HEAD):
//
//   - no Range, an empty one, a unit other than bytes, a ranges-specifier that is
//     not valid syntax (including a last-pos below its first-pos and a set with no
//     range), more than MaxRanges ranges, or an empty representation: the header is
//     ignored and the whole representation is served (200);
//   - otherwise, if no range is satisfiable (every first-pos at or past the end,
//     every suffix-length 0): 416 with "Content-Range: bytes */size";
//   - otherwise the satisfiable ranges are served (206), unsatisfiable ones dropped.
//
// Conditional headers keep their RFC 9110 §13.2.2 precedence: ServeContent still
// evaluates them, and a 416 is made by handing it an unsatisfiable canonical range.

// rangeAction is what a content handler does about a request's Range header.
type rangeAction int

const (
	rangeIgnore        rangeAction = iota // serve the whole representation (200)
	rangeServe                            // serve the satisfiable ranges (206)
	rangeUnsatisfiable                    // 416 with Content-Range: bytes */size
)

// rangePlan is the verdict on a Range header for a representation of a given size.
type rangePlan struct {
	act rangeAction
	// rewrite: ServeContent would misread the header (unit case, a zero suffix,
	// a position beyond int64): replace it by canonicalRanges' answer.
	rewrite bool
}

// planRange reads the Range header value v for a representation of size bytes.
func planRange(v string, size int64, maxRanges int) rangePlan {
	unit, set, ok := strings.Cut(v, "=")
	if !ok || !strings.EqualFold(unit, "bytes") || size <= 0 {
		return rangePlan{act: rangeIgnore}
	}
	plan := rangePlan{act: rangeUnsatisfiable, rewrite: unit != "bytes"}
	n := 0
	for spec := range strings.SplitSeq(set, ",") {
		if spec = strings.Trim(spec, " \t"); spec == "" {
			continue // empty list elements are allowed (RFC 9110 §5.6.1)
		}
		if n++; n > maxRanges {
			return rangePlan{act: rangeIgnore}
		}
		r, ok := parseRangeSpec(spec, size)
		switch {
		case !ok:
			return rangePlan{act: rangeIgnore}
		case r.exotic:
			plan.rewrite = true
		}
		if r.satisfiable {
			plan.act = rangeServe
		}
	}
	if n == 0 {
		return rangePlan{act: rangeIgnore} // "bytes=" or "bytes=,": no range-spec
	}
	return plan
}

// ApplyRange rewrites r's Range header so that http.ServeContent answers as planRange
// decides, ServeContent does the rest.
func ApplyRange(r *http.Request, size int64, maxRanges int) {
	v := r.Header.Get("Range")
	if v == "" {
		return
	}
	switch p := planRange(v, size, maxRanges); {
	case p.act == rangeIgnore:
		r.Header.Del("Range")
	case p.act == rangeUnsatisfiable:
		// ServeContent answers this with 416 and "bytes */size", after the
		// preconditions (If-Match, If-None-Match...) that take precedence.
		r.Header.Set("Range", "bytes="+strconv.FormatInt(size, 10)+"-")
	case p.rewrite:
		r.Header.Set("Range", canonicalRanges(v, size))
	}
}

// canonicalRanges returns "bytes=a-b,c-d..." listing the satisfiable ranges of a
// header planRange accepted, as absolute inclusive positions ServeContent reads
// exactly.
func canonicalRanges(v string, size int64) string {
	_, set, _ := strings.Cut(v, "=")
	b := []byte("bytes=")
	for spec := range strings.SplitSeq(set, ",") {
		r, ok := parseRangeSpec(strings.Trim(spec, " \t"), size)
		if !ok || !r.satisfiable {
			continue
		}
		if len(b) > len("bytes=") {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, r.start, 10)
		b = strconv.AppendInt(append(b, '-'), r.end, 10)
	}
	return string(b)
}

// byteRange is one parsed range-spec, resolved against the representation's size.
type byteRange struct {
	start, end  int64 // inclusive, when satisfiable
	satisfiable bool
	exotic      bool // a form ServeContent misreads: a zero suffix or a number past int64
}

// parseRangeSpec parses "first-[last]" or "-suffix" (RFC 9110 §14.1.1) for a
// representation of size > 0 bytes; ok is false for invalid syntax.
func parseRangeSpec(s string, size int64) (r byteRange, ok bool) {
	first, last, found := strings.Cut(s, "-")
	if !found {
		return r, false
	}
	if first == "" { // suffix-range
		n, big, ok := parseDigits(last)
		if !ok {
			return r, false
		}
		r.exotic = big || n == 0
		r.satisfiable = n > 0
		r.start, r.end = max(size-n, 0), size-1
		return r, true
	}
	a, bigA, ok := parseDigits(first)
	if !ok {
		return r, false
	}
	b, bigB := int64(math.MaxInt64), false
	if last != "" {
		if b, bigB, ok = parseDigits(last); !ok || b < a {
			return r, false // RFC 9110 §14.1.1: last-pos below first-pos is invalid
		}
	}
	r.exotic = bigA || bigB
	r.satisfiable = a < size
	r.start, r.end = a, min(b, size-1)
	return r, true
}

// parseDigits parses a non-empty run of ASCII digits; a value past int64 saturates
// to math.MaxInt64 and sets big.
func parseDigits(s string) (n int64, big, ok bool) {
	if s == "" {
		return 0, false, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n, big = math.MaxInt64, true
			continue
		}
		if !big {
			n = n*10 + d
		}
	}
	return n, big, true
}
