package tenant

import (
	"net/http"
	"strconv"
	"time"
)

// Header names of a rate-limited answer: RFC 9110's Retry-After and the IETF
// httpapi draft's RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset
// (seconds until the quota is whole again).
const (
	HeaderRetryAfter = "Retry-After"
	HeaderLimit      = "RateLimit-Limit"
	HeaderRemaining  = "RateLimit-Remaining"
	HeaderReset      = "RateLimit-Reset"
)

// The same names in net/http's canonical form, the keys http.Header.Get looks
// up (the IETF spelling above goes on the wire in AppendHeaders).
const (
	keyLimit     = "Ratelimit-Limit"
	keyRemaining = "Ratelimit-Remaining"
	keyReset     = "Ratelimit-Reset"
)

// seconds rounds d up to whole seconds, as these headers count; a refusal says at
// least 1 so a client does not retry at once.
func seconds(d time.Duration, atLeastOne bool) int64 {
	s := int64((d + time.Second - 1) / time.Second)
	if atLeastOne {
		s = max(s, 1)
	}
	return max(s, 0)
}

// SetHeaders writes d's RateLimit-* headers into h, and Retry-After when d
// refuses. A Decision with no limit (Limit 0) writes nothing.
func SetHeaders(h http.Header, d Decision) {
	if d.Limit == 0 {
		return
	}
	h[keyLimit] = []string{strconv.Itoa(d.Limit)}
	h[keyRemaining] = []string{strconv.Itoa(d.Remaining)}
	h[keyReset] = []string{strconv.FormatInt(seconds(d.Reset, false), 10)}
	if !d.OK {
		h[HeaderRetryAfter] = []string{strconv.FormatInt(seconds(d.RetryAfter, true), 10)}
	}
}

// AppendHeaders appends the same headers as SetHeaders to dst as HTTP/1.1 header
// lines ("Name: value\r\n"), for the fast path's own response writer, without
// allocating when dst has room.
func AppendHeaders(dst []byte, d Decision) []byte {
	if d.Limit == 0 {
		return dst
	}
	dst = strconv.AppendInt(append(dst, HeaderLimit+": "...), int64(d.Limit), 10)
	dst = strconv.AppendInt(append(dst, "\r\n"+HeaderRemaining+": "...), int64(d.Remaining), 10)
	dst = strconv.AppendInt(append(dst, "\r\n"+HeaderReset+": "...), seconds(d.Reset, false), 10)
	dst = append(dst, "\r\n"...)
	if !d.OK {
		dst = strconv.AppendInt(append(dst, HeaderRetryAfter+": "...), seconds(d.RetryAfter, true), 10)
		dst = append(dst, "\r\n"...)
	}
	return dst
}
