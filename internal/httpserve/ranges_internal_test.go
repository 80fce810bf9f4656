package httpserve

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

// singleRange matches the well-formed single byte ranges the fuzz model knows.
var singleRange = regexp.MustCompile(`^bytes=([0-9]{0,6})-([0-9]{0,6})$`)

// modelRange is the RFC 9110 answer for "bytes=first-last" (either may be "") on a
// representation of size bytes: the action and, for rangeServe, the range.
func modelRange(first, last string, size int64) (rangeAction, string) {
	a, errA := strconv.ParseInt(first, 10, 64)
	b, errB := strconv.ParseInt(last, 10, 64)
	switch {
	case size <= 0 || (errA != nil && errB != nil) || (errA == nil && errB == nil && b < a):
		return rangeIgnore, ""
	case errA != nil && b == 0, errA == nil && a >= size:
		return rangeUnsatisfiable, ""
	case errA != nil:
		return rangeServe, fmt.Sprintf("bytes=%d-%d", max(size-b, 0), size-1)
	case errB != nil:
		return rangeServe, fmt.Sprintf("bytes=%d-%d", a, size-1)
	}
	return rangeServe, fmt.Sprintf("bytes=%d-%d", a, min(b, size-1))
}

// FuzzPlanRange: planRange never panics; for a well-formed single range it agrees
// with modelRange; a header it serves has a canonical form that plans the same way
// without a rewrite and lists at most as many ranges as the header.
func FuzzPlanRange(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=-0", "bytes=-1", "items=0-1", "Bytes=0-1", "bytes=5-2",
		"bytes=99999999999999999999-", "bytes=0-1, 1-2", "bytes=,", "bytes=--1", "bytes= 0-1 ,\t2-3"} {
		f.Add(s, int64(1000))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		p := planRange(v, size, 16)
		if m := singleRange.FindStringSubmatch(v); m != nil {
			act, want := modelRange(m[1], m[2], size)
			if p.act != act {
				t.Fatalf("%q size %d: action %d, model %d", v, size, p.act, act)
			}
			if act == rangeServe && canonicalRanges(v, size) != want {
				t.Fatalf("%q size %d: canonical %q, model %q", v, size, canonicalRanges(v, size), want)
			}
		}
		if p.act != rangeServe {
			return
		}
		c := canonicalRanges(v, size)
		if q := planRange(c, size, 16); q.act != rangeServe || q.rewrite {
			t.Fatalf("%q size %d: canonical %q plans as %+v", v, size, c, q)
		}
	})
}
