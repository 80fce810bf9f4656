package rpcapi_test

import (
	"encoding/json"
	goreflect "reflect" // grpcgo_test.go has a func reflect
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/site"
)

// fullSite sets every field of site.Site, at every depth (TestFullSiteIsFull checks
// it), with every kind of target.
func fullSite() site.Site {
	on, off, neg := true, false, site.Duration(0)
	edge := site.EdgePolicy{TTL: site.Duration(90 * time.Second), StaleWhileRevalidate: site.Duration(1500 * time.Millisecond),
		StaleIfError: site.Duration(24 * time.Hour), NegativeTTL: &neg}
	route := func(path string, tg site.Target) site.Route {
		return site.Route{Path: path, StripPrefix: "/media", Target: tg, Index: "index.htm", Fallback: "/index.html",
			NotFound: "/404.html", Headers: map[string]string{"X-Frame-Options": "DENY"},
			CacheControl: []site.CacheRule{{Match: "*.html", Value: "no-cache"}}, Tags: []string{"media", "v2"},
			Compress: &off, Edge: edge}
	}
	return site.Site{ID: "www", Hosts: []string{"www.example.com", "example.com"},
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

// TestFullSiteIsFull: fullSite leaves no field of site.Site zero at any depth (a
// pointer to a struct and a slice are followed into their elements; a Target has
// one kind set per route, all kinds among the routes): a field added to site.Site fails here
// until fullSite sets it, and then TestSiteMirror until adminv1.Site has it.
func TestFullSiteIsFull(t *testing.T) {
	targets := map[string]bool{}
	for _, r := range fullSite().Routes {
		tv := goreflect.ValueOf(r.Target)
		for i := range tv.NumField() {
			if !tv.Field(i).IsNil() {
				targets[tv.Type().Field(i).Name] = true
			}
		}
	}
	if n := goreflect.TypeOf(site.Target{}).NumField(); len(targets) != n {
		t.Errorf("fullSite's routes use %d of the %d kinds of target", len(targets), n)
	}
	var walk func(path string, v goreflect.Value)
	walk = func(path string, v goreflect.Value) {
		if v.IsZero() && !targetKind(path) {
			t.Errorf("fullSite leaves %s zero", path)
			return
		}
		switch v.Kind() {
		case goreflect.Pointer: // set is enough for a presence (*bool, *Duration)
			if e := v.Elem(); e.Kind() == goreflect.Struct {
				walk(path, e)
			}
		case goreflect.Struct:
			if v.Type() == goreflect.TypeOf(time.Time{}) {
				return
			}
			for i := range v.NumField() {
				walk(path+"."+v.Type().Field(i).Name, v.Field(i))
			}
		case goreflect.Slice:
			for i := range v.Len() {
				walk(path+"[]", v.Index(i))
			}
		}
	}
	walk("Site", goreflect.ValueOf(fullSite()))
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

// TestSiteMirror: adminv1.Site mirrors site.Site's JSON exactly. A fully set
// site.Site, encoded with encoding/json, is read by protojson into adminv1.Site
// (which refuses unknown names), written back by protojson as the face writes
// documents, and read by encoding/json into a site.Site equal to the first.
func TestSiteMirror(t *testing.T) {
	want := fullSite()
	doc, err := json.Marshal(want)
	check(t, "json.Marshal", err)
	var pb adminv1.Site
	if err := protojson.Unmarshal(doc, &pb); err != nil {
		t.Fatalf("protojson cannot read site.Site's JSON: %v\n%s", err, doc)
	}
	back, err := protojson.MarshalOptions{}.Marshal(&pb)
	check(t, "protojson.Marshal", err)
	var got site.Site
	if err := json.Unmarshal(back, &got); err != nil {
		t.Fatalf("site.Site cannot read protojson's JSON: %v\n%s", err, back)
	}
	if !goreflect.DeepEqual(got, want) {
		t.Errorf("round trip changed the site:\nsent     %s\nreturned %s", doc, back)
	}
	var a, b any
	check(t, "decode", json.Unmarshal(doc, &a))
	check(t, "decode", json.Unmarshal(back, &b))
	if !goreflect.DeepEqual(keys(a), keys(b)) {
		t.Errorf("names differ:\nsite.Site  %v\nadminv1    %v", keys(a), keys(b))
	}
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
