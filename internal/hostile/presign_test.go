package hostile

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
)

// presigned is a presigned URL taken apart: its path and raw key=value pairs.
type presigned struct {
	method, path string
	pairs        [][2]string // raw (encoded) keys and values, in order
}

func (p presigned) query() string {
	kv := make([]string, len(p.pairs))
	for i, pr := range p.pairs {
		kv[i] = pr[0] + "=" + pr[1]
	}
	return strings.Join(kv, "&")
}

// clone returns a deep copy of p to mutate.
func (p presigned) clone() presigned {
	p.pairs = slices.Clone(p.pairs)
	return p
}

// signatureKeys are the parameters that carry a signature.
var signatureKeys = []string{"X-Amz-Signature", "X-Coffer-Signature"}

// signed returns what a URL's signature covers, as the server reads it: the file id
// (canonical), the signed parameters (V4: X-Amz-* and x-id; the older form: all) but
// the signature, and whether the signature of orig is among its signature values.
// A mutant with the same signed content as a URL, and that URL's signature, is a
// request the URL's holder may make: the only mutants a server may accept.
func (p presigned) signed(v4 bool, orig string) string {
	if p.method != "GET" && p.method != "HEAD" { // HEAD: GET without the body
		return "method " + p.method
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(p.path, "/v1/files/"), "/")
	rest := strings.TrimPrefix(p.path, "/v1/files/"+id)
	if rest != "/presignedurl/contents" && rest != "/presignedurl/content" {
		return "path " + p.path
	}
	q, _ := url.ParseQuery(p.query()) // as the server's URL.Query: bad pairs dropped
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range q {
			signs := !v4 || strings.HasPrefix(k, "X-Amz-") || k == "x-id"
			if signs && !slices.Contains(signatureKeys, k) && !yield(k) {
				return
			}
		}
	})
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%v\n", strings.ToLower(id), slices.Contains(q[signatureKeys[0]], orig) || slices.Contains(q[signatureKeys[1]], orig))
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q\n", k, q[k])
	}
	return b.String()
}

// parsePresigned takes a URL the server signed apart.
func parsePresigned(t *testing.T, raw string) presigned {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p := presigned{method: "GET", path: u.Path}
	for kv := range strings.SplitSeq(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		p.pairs = append(p.pairs, [2]string{k, v})
	}
	return p
}

// TestPresignMutations mutates valid presigned URLs of both forms (S3's X-Amz-* and
// coffer's earlier X-Coffer-*) several hundred ways: each parameter removed,
// duplicated, emptied, re-cased, re-encoded and changed a byte at a time, parameters
// added and reordered, expiry, date, credential and signature changed, the path's
// id and form changed and other methods: no mutant is accepted unless it signs the
// same request, and none is answered with a 5xx.
func TestPresignMutations(t *testing.T) {
	s := newServer(t)
	tl := s.tally("presign")
	id := s.mustUpload("alice", "signed", "s.txt", []byte("presigned contents"))
	other := s.mustUpload("alice", "signed", "o.txt", []byte("other contents"))
	var v4 struct {
		URL string `json:"url"`
	}
	a := s.mustStatus(http.StatusOK, "GET", "/v1/files/"+id+"/presignedurl", nil, as("alice")...)
	json.Unmarshal(a.body, &v4)
	legacy := s.url + "/v1/files/" + id + "/presignedurl/contents?" + s.signer.Sign("GET", id, time.Hour, nil)
	for _, form := range []struct {
		name string
		raw  string
		v4   bool
	}{{"v4", v4.URL, true}, {"legacy", legacy, false}} {
		orig := parsePresigned(t, form.raw)
		if a := s.sendPresigned(orig); a.status != http.StatusOK || string(a.body) != "presigned contents" {
			t.Fatalf("%s: the URL as signed: %d %s", form.name, a.status, a.body)
		}
		q, _ := url.ParseQuery(orig.query())
		sig := q.Get(signatureKeys[0]) + q.Get(signatureKeys[1])
		want := orig.signed(form.v4, sig)
		for i, m := range mutations(orig, other) {
			a := s.sendPresigned(m)
			wrong := ""
			if a.status >= 200 && a.status < 300 && m.signed(form.v4, sig) != want {
				wrong = "accepted"
			}
			tl.probe(fmt.Sprintf("%s mutation %d: %s %s?%s", form.name, i, m.method, m.path, m.query()), a, wrong)
		}
	}
}

// sendPresigned sends p without credentials.
func (s *server) sendPresigned(p presigned) answer {
	req, err := http.NewRequest(p.method, s.url+p.path+"?"+p.query(), nil)
	if err != nil { // a path the client cannot send
		return answer{status: http.StatusBadRequest}
	}
	return s.send(req)
}

// mutations returns the mutants of a presigned URL p; other is another file's id.
func mutations(p presigned, other string) []presigned {
	var out []presigned
	add := func(f func(m *presigned)) {
		m := p.clone()
		f(&m)
		out = append(out, m)
	}
	for i := range p.pairs {
		out = append(out, pairMutations(p, i)...)
	}
	for _, kv := range [][2]string{{"X-Amz-Security-Token", "x"}, {"x-id", "PutObject"}, {"foo", "bar"},
		{"X-Coffer-Expires", "9999999999"}, {"X-Amz-Expires", "604800"}, {"X-Amz-Signature", strings.Repeat("0", 64)},
		{"X-Coffer-Signature", "AAAA"}, {"", ""}, {"X-Amz-Date", "20991231T000000Z"}} {
		add(func(m *presigned) { m.pairs = append(m.pairs, kv) })
		add(func(m *presigned) { m.pairs = append([][2]string{kv}, m.pairs...) })
	}
	id, _, _ := strings.Cut(strings.TrimPrefix(p.path, "/v1/files/"), "/")
	for _, path := range []string{strings.Replace(p.path, id, other, 1), strings.Replace(p.path, id, strings.ToUpper(id), 1),
		strings.Replace(p.path, "contents", "content", 1), p.path + "/", strings.Replace(p.path, id, id+"0", 1),
		strings.Replace(p.path, id, "..%2f"+id, 1), strings.Replace(p.path, id, id[:35], 1), "/v1/files/" + id,
		strings.Replace(p.path, id, "%2e%2e", 1), strings.Replace(p.path, "/v1/", "/v1//", 1)} {
		add(func(m *presigned) { m.path = path })
	}
	for _, method := range []string{"HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		add(func(m *presigned) { m.method = method })
	}
	rng := rand.New(rand.NewPCG(15, 3))
	for range 20 {
		add(func(m *presigned) {
			rng.Shuffle(len(m.pairs), func(i, j int) { m.pairs[i], m.pairs[j] = m.pairs[j], m.pairs[i] })
		})
	}
	return out
}

// pairMutations returns the mutants of p's i-th parameter.
func pairMutations(p presigned, i int) []presigned {
	k, v := p.pairs[i][0], p.pairs[i][1]
	var out []presigned
	set := func(nk, nv string) {
		m := p.clone()
		m.pairs[i] = [2]string{nk, nv}
		out = append(out, m)
	}
	for _, nv := range []string{"", strings.ToUpper(v), strings.ToLower(v), v + "0", v[:max(len(v)-1, 0)], v + "%00",
		v + "+", "+" + v, v + v, "%zz", strings.Repeat("9", 40), "-1", "0", "1e3", percentEncodeAll(v)} {
		set(k, nv)
	}
	for _, nk := range []string{strings.ToLower(k), strings.ToUpper(k), percentEncodeAll(k), k + " ", k + "[]"} {
		set(nk, v)
	}
	for j := 0; j < len(v); j += max(1, len(v)/24) { // a byte changed at (up to) 24 places
		set(k, v[:j]+string(flip(v[j]))+v[j+1:])
	}
	for _, dup := range [][2]string{{k, v}, {k, v + "0"}} {
		m := p.clone()
		m.pairs = slices.Insert(m.pairs, i+1, dup)
		out = append(out, m)
		m = p.clone()
		m.pairs = slices.Insert(m.pairs, 0, dup)
		out = append(out, m)
	}
	m := p.clone()
	m.pairs = slices.Delete(m.pairs, i, i+1)
	return append(out, m)
}

// flip returns another character of the same kind as c.
func flip(c byte) byte {
	switch {
	case c == '9', c == 'z', c == 'Z':
		return c - 1
	case c == '%':
		return '5'
	default:
		return c + 1
	}
}

// percentEncodeAll encodes every byte of s (already-encoded input is decoded first,
// so the result means the same).
func percentEncodeAll(s string) string {
	d, err := url.QueryUnescape(s)
	if err != nil {
		d = s
	}
	var b strings.Builder
	for i := 0; i < len(d); i++ {
		fmt.Fprintf(&b, "%%%02X", d[i])
	}
	return b.String()
}
