package httpserve

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTP dates for content serving: Last-Modified written without time.Format, and
// conditional request dates that http.ServeContent would ignore brought to the form
// it reads.

// ZeroTime is http.ServeContent's test for "no modification time".
func ZeroTime(t time.Time) bool { return t.IsZero() || t.Equal(time.Unix(0, 0)) }

// HasDateCondition reports whether a request has a header that ServeContent checks
// against the modification time.
func HasDateCondition(h http.Header) bool {
	return h.Get("If-Modified-Since") != "" || h.Get("If-Unmodified-Since") != "" || h.Get("If-Range") != ""
}

// dateHeaders are the request headers ServeContent reads as HTTP dates.
var dateHeaders = [...]string{"If-Modified-Since", "If-Unmodified-Since", "If-Range"}

// NormalizeDates rewrites conditional dates that http.ParseTime refuses but that are
// unambiguous RFC 1123 dates in another zone spelling, such as "UTC" (what Go's
// time.RFC1123 writes, and so what Nhost's Go client sends), to http.TimeFormat, so
// they are honoured (as hasura-storage honours them) instead of ignored.
func NormalizeDates(h http.Header) {
	for _, k := range dateHeaders {
		v := h.Get(k)
		if v == "" || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "W/") {
			continue
		}
		if _, err := http.ParseTime(v); err == nil {
			continue
		}
		layout := time.RFC1123Z // a numeric offset: "+0000"
		if strings.HasSuffix(v, " UTC") || strings.HasSuffix(v, " UT") {
			layout = time.RFC1123 // other abbreviations ("PST") would parse as UTC: ignored
		}
		if t, err := time.Parse(layout, v); err == nil {
			h.Set(k, t.UTC().Format(http.TimeFormat))
		}
	}
}

// AppendHTTPDate appends t as http.TimeFormat ("Mon, 02 Jan 2006 15:04:05 GMT").
func AppendHTTPDate(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 {
		return t.AppendFormat(b, http.TimeFormat)
	}
	hh, mm, ss := t.Clock()
	b = append(b, t.Weekday().String()[:3]...)
	b = appendPadded(append(b, ", "...), d, 2)
	b = append(append(append(b, ' '), mo.String()[:3]...), ' ')
	b = appendPadded(b, y, 4)
	b = appendPadded(append(b, ' '), hh, 2)
	b = appendPadded(append(b, ':'), mm, 2)
	b = appendPadded(append(b, ':'), ss, 2)
	return append(b, " GMT"...)
}

// appendPadded appends n >= 0 in decimal with at least width digits.
func appendPadded(b []byte, n, width int) []byte {
	for w := 10; width > 1; width, w = width-1, w*10 {
		if n < w {
			b = append(b, '0')
		}
	}
	return strconv.AppendInt(b, int64(n), 10)
}
