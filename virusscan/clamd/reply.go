package clamd

import (
	"fmt"
	"strings"

	"github.com/coffer/coffer/virusscan"
)

// ParseReply reads clamd's answer to INSTREAM (without its NUL terminator):
//
//	stream: OK                                  clean
//	stream: Eicar-Test-Signature FOUND          infected
//	INSTREAM size limit exceeded. ERROR         virusscan.ErrTooLarge
//	<anything> ERROR, anything else             virusscan.ErrUnavailable
//
// A session prefix ("1: ") is allowed. Bytes of the signature that are not printable
// ASCII are replaced by '?', so it can go into a header or a log line as it is.
func ParseReply(reply string) (virusscan.Verdict, error) {
	r := strings.TrimRight(reply, "\x00\r\n")
	switch {
	case strings.HasSuffix(r, " FOUND"):
		body := strings.TrimSuffix(r, " FOUND")
		i := strings.LastIndex(body, ": ")
		if i < 0 {
			return virusscan.Verdict{}, unavailable("malformed reply %q", clip(r))
		}
		sig := cleanSignature(body[i+2:])
		if sig == "" {
			return virusscan.Verdict{}, unavailable("malformed reply %q", clip(r))
		}
		return virusscan.Verdict{Infected: true, Signature: sig}, nil
	case strings.HasSuffix(r, ": OK") || r == "OK":
		return virusscan.Verdict{}, nil
	case strings.Contains(r, "size limit exceeded"):
		return virusscan.Verdict{}, fmt.Errorf("%w: clamd: %s", virusscan.ErrTooLarge, clip(r))
	case strings.HasSuffix(r, " ERROR"):
		return virusscan.Verdict{}, unavailable("%s", clip(r))
	}
	return virusscan.Verdict{}, unavailable("unexpected reply %q", clip(r))
}

// cleanSignature trims s, caps it at 200 bytes and replaces bytes that are not
// printable ASCII.
func cleanSignature(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200]
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '?'
		}
	}
	return string(b)
}

// clip shortens a reply for an error message.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
