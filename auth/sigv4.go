package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Query parameters of a presigned URL in S3's form (AWS Signature Version 4, query
// string authentication), the shape hasura-storage's URLs have and Nhost's generated
// clients rebuild URLs from.
const (
	AmzAlgorithm     = "X-Amz-Algorithm"
	AmzCredential    = "X-Amz-Credential"
	AmzDate          = "X-Amz-Date"
	AmzExpires       = "X-Amz-Expires"
	AmzSignedHeaders = "X-Amz-SignedHeaders"
	AmzSignature     = "X-Amz-Signature"
	AmzChecksumMode  = "X-Amz-Checksum-Mode"
	AmzXID           = "x-id"
)

const (
	sigV4Algorithm = "AWS4-HMAC-SHA256"
	sigV4Region    = "us-east-1"
	sigV4Service   = "s3"
	sigV4Terminal  = "aws4_request"
	amzDateFormat  = "20060102T150405Z"
	// maxV4Expires is S3's limit on X-Amz-Expires (7 days).
	maxV4Expires = 7 * 24 * 3600
	// maxV4Skew is how far in the future X-Amz-Date may be (S3 allows 15 minutes).
	maxV4Skew = 15 * time.Minute
)

// PresignV4 returns the query (without '?') that authorises a GET of path on host
// until now+ttl, signed with the current key as S3 signs a presigned GetObject: the
// key id is the access key, the key the secret. Only the X-Amz-* parameters and x-id
// are signed: parameters a client appends (image transformations) are not, as with
// hasura-storage's S3-presigned URLs.
func (s *Signer) PresignV4(host, path string, ttl time.Duration) string {
	now := s.now().UTC()
	secs := min(max(int64(ttl/time.Second), 1), maxV4Expires)
	q := url.Values{}
	q.Set(AmzAlgorithm, sigV4Algorithm)
	q.Set(AmzCredential, s.current+"/"+credentialScope(now))
	q.Set(AmzDate, now.Format(amzDateFormat))
	q.Set(AmzExpires, strconv.FormatInt(secs, 10))
	q.Set(AmzSignedHeaders, "host")
	q.Set(AmzChecksumMode, "ENABLED") // as aws-sdk-go-v2 presigns; hasura-storage's OpenAPI requires it
	q.Set(AmzXID, "GetObject")
	sig := sigV4(s.keys[s.current], now, "GET", host, path, q)
	return canonicalQuery(q) + "&" + AmzSignature + "=" + sig
}

// IsV4 reports whether q is a presigned query in S3's form.
func IsV4(q url.Values) bool { return q.Has(AmzSignature) || q.Has(AmzAlgorithm) }

// VerifyV4 checks a presigned query in S3's form for a GET of path on host, and
// returns when it expires. An expired URL is EINVALID "signature already expired"
// (hasura-storage's answer); every other failure is EFORBIDDEN with a message that
// says which check failed (none reveals the key).
func (s *Signer) VerifyV4(host, path string, q url.Values) (time.Time, error) {
	for _, k := range [...]string{AmzAlgorithm, AmzCredential, AmzDate, AmzExpires, AmzSignedHeaders, AmzSignature} {
		if len(q[k]) != 1 {
			return time.Time{}, forbidden("presigned URL must have exactly one " + k)
		}
	}
	if q.Get(AmzAlgorithm) != sigV4Algorithm {
		return time.Time{}, forbidden("presigned URL algorithm must be " + sigV4Algorithm)
	}
	if q.Get(AmzSignedHeaders) != "host" {
		return time.Time{}, forbidden("presigned URL must sign the host header only")
	}
	date, err := time.Parse(amzDateFormat, q.Get(AmzDate))
	if err != nil {
		return time.Time{}, forbidden("presigned URL has a malformed X-Amz-Date")
	}
	secs, err := strconv.ParseInt(q.Get(AmzExpires), 10, 64)
	if err != nil || secs < 1 || secs > maxV4Expires {
		return time.Time{}, forbidden("presigned URL X-Amz-Expires must be 1 to 604800 seconds")
	}
	kid, scope, _ := strings.Cut(q.Get(AmzCredential), "/")
	key, ok := s.keys[kid]
	if !ok {
		return time.Time{}, forbidden("presigned URL was signed with an unknown key")
	}
	if scope != credentialScope(date) {
		return time.Time{}, forbidden("presigned URL credential scope does not match its date")
	}
	want := sigV4(key, date, "GET", host, path, signedParams(q))
	if subtle.ConstantTimeCompare([]byte(want), []byte(q.Get(AmzSignature))) != 1 {
		return time.Time{}, forbidden("presigned URL signature does not match")
	}
	now, exp := s.now(), date.Add(time.Duration(secs)*time.Second)
	if date.After(now.Add(maxV4Skew)) {
		return time.Time{}, forbidden("presigned URL is not valid yet")
	}
	if now.After(exp) { // hasura-storage's answer: 400, its message
		return time.Time{}, coffer.Errorf(coffer.EINVALID, "signature already expired")
	}
	return exp, nil
}

func forbidden(msg string) error { return coffer.Errorf(coffer.EFORBIDDEN, "%s", msg) }

// signedParams returns the parameters a V4 presigned URL signs: X-Amz-* (but the
// signature) and x-id.
func signedParams(q url.Values) url.Values {
	c := url.Values{}
	for k, v := range q {
		if (strings.HasPrefix(k, "X-Amz-") && k != AmzSignature) || k == AmzXID {
			c[k] = v
		}
	}
	return c
}

func credentialScope(t time.Time) string {
	return t.UTC().Format("20060102") + "/" + sigV4Region + "/" + sigV4Service + "/" + sigV4Terminal
}

// sigV4 is the hex signature of AWS Signature Version 4 over a GET with the host
// header signed and an unsigned payload.
func sigV4(key []byte, t time.Time, method, host, path string, q url.Values) string {
	creq := method + "\n" + escapePath(path) + "\n" + canonicalQuery(q) + "\nhost:" + host + "\n\nhost\nUNSIGNED-PAYLOAD"
	sum := sha256.Sum256([]byte(creq))
	toSign := sigV4Algorithm + "\n" + t.UTC().Format(amzDateFormat) + "\n" + credentialScope(t) + "\n" + hex.EncodeToString(sum[:])
	k := hmacSHA256([]byte("AWS4"+string(key)), t.UTC().Format("20060102"))
	for _, part := range [...]string{sigV4Region, sigV4Service, sigV4Terminal} {
		k = hmacSHA256(k, part)
	}
	return hex.EncodeToString(hmacSHA256(k, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalQuery is SigV4's canonical query string: keys sorted, keys and values
// escaped as RFC 3986 (only unreserved characters left as they are).
func canonicalQuery(q url.Values) string {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		vs := append([]string(nil), q[k]...)
		sort.Strings(vs)
		for _, v := range vs {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(awsEscape(k, true) + "=" + awsEscape(v, true))
		}
	}
	return b.String()
}

// escapePath escapes a URI path as SigV4 does for S3 (slashes kept).
func escapePath(p string) string { return awsEscape(p, false) }

func awsEscape(s string, slash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !slash) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{c})))
	}
	return b.String()
}
