package rpcapi

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/site"
)

// filler sets every field of a message, at every depth, to a value that is not
// its default, each scalar different (so that two fields swapped by a conversion
// show). A repeated message field gets fillerCopies elements, element i choosing
// case i of each oneof (modulo its size), so that every kind of target appears; a
// scalar with presence (an optional bool) is set to false in even elements and
// true in odd ones, so that presence is kept apart from value.
type filler struct {
	n     int                            // the last value used
	cases map[protoreflect.FullName]bool // the oneof cases set
}

const fillerCopies = 4

// fill sets every field of m; variant picks the oneof cases and presence values.
func (f *filler) fill(m protoreflect.Message, variant int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() && o.Fields().Get(variant%o.Fields().Len()) != fd {
			continue
		}
		if fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			f.cases[fd.FullName()] = true
		}
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for range 2 {
				mp.Set(f.scalar(fd.MapKey(), variant).MapKey(), f.scalar(fd.MapValue(), variant))
			}
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := range fillerCopies {
				if fd.Message() != nil {
					e := l.NewElement()
					f.message(e.Message(), j)
					l.Append(e)
				} else {
					l.Append(f.scalar(fd, j))
				}
			}
		case fd.Message() != nil:
			f.message(m.Mutable(fd).Message(), variant)
		default:
			m.Set(fd, f.scalar(fd, variant))
		}
	}
}

// message fills m; the well-known types get valid values (a duration with nanos).
func (f *filler) message(m protoreflect.Message, variant int) {
	f.n++
	switch m.Descriptor().FullName() {
	case "google.protobuf.Duration":
		proto.Merge(m.Interface(), durationpb.New(time.Duration(f.n)*time.Second+500*time.Millisecond))
	case "google.protobuf.Timestamp":
		proto.Merge(m.Interface(), timestamppb.New(time.Date(2026, 11, 25, 6, 0, f.n, 123456000, time.UTC)))
	default:
		f.fill(m, variant)
	}
}

// scalar is a value of fd's kind not used before (false/true by variant for a
// field with presence).
func (f *filler) scalar(fd protoreflect.FieldDescriptor, variant int) protoreflect.Value {
	f.n++
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fd.TextName() + "-" + strconv.Itoa(f.n))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!fd.HasPresence() || variant%2 == 1)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(300 + f.n))
	}
	panic("filler: no value for " + fd.Kind().String() + " (" + string(fd.FullName()) + "): teach the test")
}

// oneofCases lists every case of every oneof reachable from md.
func oneofCases(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool, out map[protoreflect.FullName]bool) {
	if seen[md.FullName()] {
		return
	}
	seen[md.FullName()] = true
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			out[fd.FullName()] = true
		}
		if fd.Message() != nil {
			oneofCases(fd.Message(), seen, out)
		}
	}
}

// TestSiteConversionEveryField: a Site message with every field set, at every
// depth and with every kind of target, converts to a site.Document and back unchanged.
// A field added to the contract fails here until siteOf and SiteMessage convert it.
func TestSiteConversionEveryField(t *testing.T) {
	pb := &adminv1.Site{}
	f := &filler{cases: map[protoreflect.FullName]bool{}}
	f.fill(pb.ProtoReflect(), 0)
	want := map[protoreflect.FullName]bool{}
	oneofCases(pb.ProtoReflect().Descriptor(), map[protoreflect.FullName]bool{}, want)
	if !reflect.DeepEqual(f.cases, want) {
		t.Fatalf("the filled site sets oneof cases %v, want all of %v", f.cases, want)
	}
	s, err := siteOf(pb)
	if err != nil {
		t.Fatalf("siteOf: %v", err)
	}
	if back := SiteMessage(s); !proto.Equal(back, pb) {
		var diff []string
		protoDiff("site", pb.ProtoReflect(), back.ProtoReflect(), &diff)
		t.Errorf("the round trip changed the site's fields %v", diff)
	}
	if pb.Audit == nil || *pb.Audit || s.Audit == nil || *s.Audit {
		t.Errorf("audit set to false: %v, converted %v", pb.Audit, s.Audit)
	}
}

// protoDiff appends to out the paths of the fields a and b (of one type) differ in.
func protoDiff(path string, a, b protoreflect.Message, out *[]string) {
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		at := path + "." + fd.TextName()
		switch {
		case a.Has(fd) != b.Has(fd):
			*out = append(*out, at+" (set on one side only)")
		case !a.Has(fd):
		case fd.IsList() && fd.Message() != nil && a.Get(fd).List().Len() == b.Get(fd).List().Len():
			for j := range a.Get(fd).List().Len() {
				protoDiff(at+"["+strconv.Itoa(j)+"]", a.Get(fd).List().Get(j).Message(), b.Get(fd).List().Get(j).Message(), out)
			}
		case fd.Message() != nil && !fd.IsList() && !fd.IsMap():
			protoDiff(at, a.Get(fd).Message(), b.Get(fd).Message(), out)
		case !a.Get(fd).Equal(b.Get(fd)):
			*out = append(*out, at)
		}
	}
}

// TestSiteConversionFullSite: a site.Document with every field set converts to its
// message and back unchanged (a field added to site.Document fails TestFullSiteIsFull
// until fullSite sets it, then here until it is converted), a negative TTL of 0s
// kept apart from none.
func TestSiteConversionFullSite(t *testing.T) {
	want := fullSite()
	got, err := siteOf(SiteMessage(&want))
	if err != nil {
		t.Fatalf("siteOf: %v", err)
	}
	if !reflect.DeepEqual(*got, want) {
		sent, _ := json.Marshal(want)
		back, _ := json.Marshal(got)
		t.Errorf("the round trip changed the site:\nsent     %s\nreturned %s", sent, back)
	}
}

// TestSiteDocumentNames: the site document people write (site.Document's JSON, which
// `coffer admin sites create --file` reads with site.Parse and the server stores)
// and the Site message's JSON (what the API takes and `sites get` prints) use the
// same names, so a printed site can be edited and sent back. The conversion does
// not rely on it.
func TestSiteDocumentNames(t *testing.T) {
	s := fullSite()
	doc, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := protojson.Marshal(SiteMessage(&s))
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(doc, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(msg, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys(a), keys(b)) {
		t.Errorf("names differ:\nsite.Site     %v\nadminv1.Site  %v", keys(a), keys(b))
	}
	var back site.Document // as site.Parse decodes, before it validates
	if err := coffer.DecodeDocument(msg, &back, "site"); err != nil {
		t.Fatalf("site.Document cannot read the message's JSON: %v\n%s", err, msg)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("the message's JSON reads as another site:\n%+v\nwant %+v", back, s)
	}
}

// TestSiteArg: a request's site loses its output-only fields and takes the
// request's id, the message unchanged; a duration protobuf cannot hold is
// INVALID_ARGUMENT naming its field, a negative one reaches Validate (which names
// it), an oversized document is ETOOLARGE.
func TestSiteArg(t *testing.T) {
	full := fullSite()
	pb := SiteMessage(&full)
	before := proto.Clone(pb)
	s, err := siteArg(pb, "other")
	if err != nil {
		t.Fatalf("siteArg: %v", err)
	}
	if !proto.Equal(pb, before) {
		t.Errorf("siteArg changed the request's message")
	}
	s.Hosts[0] = "changed.example.com"
	if pb.Hosts[0] == "changed.example.com" {
		t.Errorf("the converted site shares the request's lists")
	}
	if s.ID != "other" || !s.CreatedAt.IsZero() || !s.UpdatedAt.IsZero() || s.PurgeWebhooks[0].SecretSet ||
		s.Routes[2].Target.S3.SecretAccessKeySet || s.Routes[2].Target.S3.SecretAccessKey != "s3-secret" {
		t.Errorf("siteArg = %+v: want id other, no output-only fields, secrets in clear", s)
	}
	for _, tc := range []struct {
		field string
		set   func(*adminv1.Site)
	}{
		{"routes[0].edge.ttl", func(p *adminv1.Site) { p.Routes[0].Edge.Ttl = &durationpb.Duration{Seconds: 1, Nanos: -1} }},
		{"routes[1].edge.negativeTtl", func(p *adminv1.Site) {
			p.Routes[1].Edge.NegativeTtl = &durationpb.Duration{Seconds: 400_000_000_000}
		}},
		{"routes[1].target.http.timeout", func(p *adminv1.Site) {
			p.Routes[1].Target.GetHttp().Timeout = &durationpb.Duration{Nanos: 2e9}
		}},
		{"routes[2].target.s3.timeout", func(p *adminv1.Site) {
			p.Routes[2].Target.GetS3().Timeout = &durationpb.Duration{Seconds: -1, Nanos: 1}
		}},
	} {
		bad := proto.CloneOf(pb)
		tc.set(bad)
		_, err := siteArg(bad, "")
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != tc.field {
			t.Errorf("%s: %v (field %q)", tc.field, err, coffer.ErrorField(err))
		}
	}
	neg := proto.CloneOf(pb) // negative: converted, for Validate to refuse naming the field
	neg.Routes[0].Edge.Ttl = durationpb.New(-time.Second)
	if s, err := siteArg(neg, ""); err != nil {
		t.Errorf("a negative ttl: %v, want it passed on", err)
	} else if err := s.Validate(); coffer.ErrorField(err) != "routes[0].edge.ttl" {
		t.Errorf("a negative ttl: Validate says %v (field %q)", err, coffer.ErrorField(err))
	}
	big := proto.CloneOf(pb)
	big.Hosts = append(big.Hosts, strings.Repeat("h", site.MaxDocSize))
	if _, err := siteArg(big, ""); coffer.ErrorCode(err) != coffer.ETOOLARGE {
		t.Errorf("oversized site: %v", err)
	}
	if _, err := siteArg(nil, ""); coffer.ErrorField(err) != "site" {
		t.Errorf("no site: %v", err)
	}
}

// fullSite sets every field of site.Document, at every depth (TestFullSiteIsFull checks
// it), with every kind of target.
func fullSite() site.Document {
	on, off, neg := true, false, site.Duration(0)
	edge := site.EdgePolicy{TTL: site.Duration(90 * time.Second), StaleWhileRevalidate: site.Duration(1500 * time.Millisecond),
		StaleIfError: site.Duration(24 * time.Hour), NegativeTTL: &neg}
	route := func(path string, tg site.Target) site.Route {
		return site.Route{Path: path, StripPrefix: "/media", Target: tg, Index: "index.htm", Fallback: "/index.html",
			NotFound: "/404.html", Headers: map[string]string{"X-Frame-Options": "DENY"},
			CacheControl: []site.CacheRule{{Match: "*.html", Value: "no-cache"}}, Tags: []string{"media", "v2"},
			Compress: &off, Edge: edge}
	}
	return site.Document{ID: "www", Hosts: []string{"www.example.com", "example.com"},
		Routes: []site.Route{
			route("/media/*", site.Target{Bucket: &site.BucketTarget{ID: "public", Prefix: "site/", Trusted: true}}),
			route("/api/*", site.Target{HTTP: &site.HTTPOrigin{URL: "http://127.0.0.1:8080/base/",
				Headers: map[string]string{"Authorization": "Bearer t"}, Timeout: site.Duration(5 * time.Second),
				HeadersSet: []string{"X-Kept"}, Precompressed: true}}),
			route("/s3/*", site.Target{S3: &site.S3Origin{Endpoint: "http://127.0.0.1:9000", Region: "eu-1", Bucket: "b",
				Prefix: "p/", AccessKeyID: "AKID", SecretAccessKey: "s3-secret", SecretAccessKeySet: true, PathStyle: true,
				Timeout: site.Duration(250 * time.Millisecond)}}),
			route("/old/*", site.Target{Redirect: &site.Redirect{To: "/new/:splat", Status: 308}}),
		},
		NotFound:      "/404.html",
		Headers:       []site.HeaderRule{{Match: "/**", Set: map[string]string{"X-Site": "www"}}},
		PurgeWebhooks: []site.PurgeWebhook{{URL: "https://cdn.example/purge", Secret: "hook-secret", SecretSet: true}},
		Audit:         &on,
		CreatedAt:     time.Date(2026, 11, 25, 6, 0, 0, 123456000, time.UTC),
		UpdatedAt:     time.Date(2026, 11, 25, 7, 30, 1, 0, time.UTC),
	}
}

// TestFullSiteIsFull: fullSite leaves no field of site.Document zero at any depth (a
// pointer to a struct and a slice are followed into their elements; a Target has
// one kind set per route, all kinds among the routes): a field added to site.Document fails here
// until fullSite sets it, and then TestSiteConversionFullSite until it is converted.
func TestFullSiteIsFull(t *testing.T) {
	targets := map[string]bool{}
	for _, r := range fullSite().Routes {
		tv := reflect.ValueOf(r.Target)
		for i := range tv.NumField() {
			if !tv.Field(i).IsNil() {
				targets[tv.Type().Field(i).Name] = true
			}
		}
	}
	if n := reflect.TypeOf(site.Target{}).NumField(); len(targets) != n {
		t.Errorf("fullSite's routes use %d of the %d kinds of target", len(targets), n)
	}
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		if v.IsZero() && !targetKind(path) {
			t.Errorf("fullSite leaves %s zero", path)
			return
		}
		switch v.Kind() {
		case reflect.Pointer: // set is enough for a presence (*bool, *Duration)
			if e := v.Elem(); e.Kind() == reflect.Struct {
				walk(path, e)
			}
		case reflect.Struct:
			if v.Type() == reflect.TypeOf(time.Time{}) {
				return
			}
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(path+"[]", v.Index(i))
			}
		}
	}
	walk("Site", reflect.ValueOf(fullSite()))
}

// targetKind reports whether path is one of a Target's kinds (all but one are nil).
func targetKind(path string) bool {
	for _, k := range []string{".Target.Bucket", ".Target.HTTP", ".Target.S3", ".Target.Redirect"} {
		if len(path) >= len(k) && path[len(path)-len(k):] == k {
			return true
		}
	}
	return false
}

// keys returns the set of object key paths in a decoded JSON value.
func keys(v any) map[string]bool {
	out := map[string]bool{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				out[path+"."+k] = true
				walk(path+"."+k, e)
			}
		case []any:
			for _, e := range v {
				walk(path+"[]", e)
			}
		}
	}
	walk("", v)
	return out
}
