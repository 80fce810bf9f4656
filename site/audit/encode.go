package audit

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendRecord appends r to b as one JSON line (ending in '\n') with the field names
// of Record's json tags: what encoding/json writes, decoded alike (TestAppendMatchesJSON,
// FuzzAppendRecord), without reflection or allocation. Time is written in UTC;
// an invalid UTF-8 byte becomes U+FFFD as encoding/json does; a duration that is NaN
// or infinite (not JSON) becomes 0.
func appendRecord(b []byte, r *Record) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = appendField(b, `","tenant":`, r.Tenant)
	b = appendField(b, `,"site":`, r.Site)
	b = appendField(b, `,"host":`, r.Host)
	b = appendField(b, `,"method":`, r.Method)
	b = appendField(b, `,"path":`, r.Path)
	b = appendField(b, `,"target":`, r.Target)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, r.Bytes, 10)
	b = append(b, `,"duration_ms":`...)
	d := r.Duration
	if math.IsNaN(d) || math.IsInf(d, 0) {
		d = 0
	}
	b = strconv.AppendFloat(b, d, 'g', -1, 64)
	b = appendField(b, `,"cache":`, r.Cache)
	b = appendField(b, `,"client":`, r.Client)
	if r.UserID != "" {
		b = appendField(b, `,"user_id":`, r.UserID)
	}
	b = appendField(b, `,"request_id":`, r.RequestID)
	return append(b, "}\n"...)
}

// appendField appends key (with its punctuation) and s as a JSON string.
func appendField(b []byte, key, s string) []byte {
	return appendString(append(b, key...), s)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a quoted JSON string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			if r == utf8.RuneError {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, `\u202`...)
				b = append(b, hexDigits[r&0xF])
			}
			i += n
			start = i
			continue
		}
		i += n
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape appends the escape of the ASCII byte c (a control, '"' or '\\').
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
