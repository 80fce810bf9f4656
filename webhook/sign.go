package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// SignatureHeader carries a delivery's signature: "t=<unix seconds>,v1=<hex>", where
// v1 is HMAC-SHA256 with the subscription's secret over "<t>.<body>". Receivers check
// it with Verify (or the same few lines in any language) and reject old timestamps, so
// a captured delivery cannot be replayed later.
const SignatureHeader = "Coffer-Signature"

// Sign returns the SignatureHeader value for body sent at time t.
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret, ts string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(ts))
	m.Write([]byte{'.'})
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks header (a SignatureHeader value) against body and secret, and that
// its timestamp is within tolerance of now. Several v1 entries are allowed (one
// matching is enough), for secret rotation. Errors are EUNAUTHORIZED.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return coffer.Errorf(coffer.EUNAUTHORIZED, "malformed %s header", SignatureHeader)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > tolerance || d < -tolerance {
		return coffer.Errorf(coffer.EUNAUTHORIZED, "signature timestamp outside the tolerance")
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			return nil
		}
	}
	return coffer.Errorf(coffer.EUNAUTHORIZED, "signature does not match")
}
