package bus_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/bus"
)

// wire pairs events with their wire form: what the store's triggers and nodes of
// earlier versions send (every kind, the default tenant and a named one).
var wire = []struct {
	payload string
	event   bus.Event
}{
	{"*", bus.Event{Kind: bus.Everything}},
	{"f:0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", bus.Event{Kind: bus.FileChanged, ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}},
	{"f:acme/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", bus.Event{Kind: bus.FileChanged, Tenant: "acme", ID: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"}},
	{"b:default", bus.Event{Kind: bus.BucketChanged, ID: "default"}},
	{"b:acme/photos", bus.Event{Kind: bus.BucketChanged, Tenant: "acme", ID: "photos"}},
	{"r", bus.Event{Kind: bus.RulesChanged}},
	{"r:acme", bus.Event{Kind: bus.RulesChanged, Tenant: "acme"}},
	{"t:acme", bus.Event{Kind: bus.TenantChanged, Tenant: "acme"}},
	{"g:acme", bus.Event{Kind: bus.TenantGone, Tenant: "acme"}},
	{"s:", bus.Event{Kind: bus.SitesChanged}},
	{"s:acme", bus.Event{Kind: bus.SitesChanged, Tenant: "acme"}},
	{`p:{"t":"acme","s":"www","p":{"paths":["/a.html","/a\u0026b"],"prefixes":["/img/"],"tags":["t1"]}}`,
		bus.Event{Kind: bus.SitePurged, Tenant: "acme", ID: "www", Purge: bus.Purge{Paths: []string{"/a.html", "/a&b"}, Prefixes: []string{"/img/"}, Tags: []string{"t1"}}}},
	{`p:{"t":"","s":"www","p":{}}`, bus.Event{Kind: bus.SitePurged, ID: "www"}},
}

// TestWire: Decode reads every kind's wire form into its event and Encode writes the
// event back byte for byte.
func TestWire(t *testing.T) {
	for _, c := range wire {
		got, err := bus.Decode(c.payload)
		if err != nil || !reflect.DeepEqual(got, c.event) {
			t.Errorf("Decode(%q) = %+v, %v; want %+v", c.payload, got, err, c.event)
		}
		p, err := bus.Encode(c.event)
		if err != nil || p != c.payload {
			t.Errorf("Encode(%+v) = %q, %v; want %q", c.event, p, err, c.payload)
		}
	}
}

// The purge's JSON is what earlier versions marshalled: json.Marshal of
// {Tenant "t", Site "s", Purge "p"} with site.Purge's fields, HTML escaped.
func TestPurgeWireIsTheOldJSON(t *testing.T) {
	type oldPurge struct {
		Paths    []string `json:"paths,omitempty"`
		Prefixes []string `json:"prefixes,omitempty"`
		Tags     []string `json:"tags,omitempty"`
	}
	type oldMessage struct {
		Tenant string   `json:"t"`
		Site   string   `json:"s"`
		Purge  oldPurge `json:"p"`
	}
	old := oldMessage{"acme", "www", oldPurge{Paths: []string{"/<a>&é"}, Tags: []string{"x"}}}
	b, _ := json.Marshal(old)
	p, err := bus.Encode(bus.Event{Kind: bus.SitePurged, Tenant: old.Tenant, ID: old.Site, Purge: bus.Purge(old.Purge)})
	if err != nil || p != "p:"+string(b) {
		t.Fatalf("Encode = %q, %v; the old nodes sent %q", p, err, "p:"+string(b))
	}
}

// Payloads that are not an event are EINVALID: a listener flushes for them.
func TestDecodeRefuses(t *testing.T) {
	for _, p := range []string{"", "x", "f:", "f:/id", "f:acme/", "f:a/b/c", "b:", "r:", "r:a/b", "t:", "g:",
		"t:a/b", "s:a/b", "q:acme", "ff:x", "p:", "p:{", `p:{"t":"a"}`, `p:{"t":"a/b","s":"w","p":{}}`, `p:[]`, "p:null",
		`p:{"t":"a","s":"w","p":{}}x`, "**", "r "} {
		if e, err := bus.Decode(p); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Decode(%q) = %+v, %v; want EINVALID", p, e, err)
		}
	}
}

// Events that cannot round-trip are EINVALID.
func TestEncodeRefuses(t *testing.T) {
	for _, e := range []bus.Event{
		{}, {Kind: 200}, {Kind: bus.Everything, Tenant: "a"}, {Kind: bus.FileChanged},
		{Kind: bus.FileChanged, ID: "a/b"}, {Kind: bus.BucketChanged, Tenant: "a/b", ID: "x"},
		{Kind: bus.RulesChanged, ID: "x"}, {Kind: bus.TenantChanged}, {Kind: bus.TenantGone},
		{Kind: bus.SitesChanged, Tenant: "a/b"}, {Kind: bus.SitePurged, Tenant: "a"},
		{Kind: bus.SitesChanged, Purge: bus.Purge{Paths: []string{"/"}}},
	} {
		if p, err := bus.Encode(e); coffer.ErrorCode(err) != coffer.EINVALID {
			t.Errorf("Encode(%+v) = %q, %v; want EINVALID", e, p, err)
		}
	}
}

// FuzzDecode: Decode reads what arrives from the network. Whatever it accepts,
// Encode writes back to an event that decodes equal, byte for byte the same payload
// but for a purge's JSON (whose spacing and escapes may differ).
func FuzzDecode(f *testing.F) {
	for _, c := range wire {
		f.Add(c.payload)
	}
	f.Add(`p:{"t":"a","s":"w","p":{"paths":[],"tags":null}}`)
	f.Add(`p:{ "T" : "a" , "s":"w","p":{"paths":["\u003c"]}}`)
	f.Fuzz(func(t *testing.T, payload string) {
		e, err := bus.Decode(payload)
		if err != nil {
			return
		}
		p, err := bus.Encode(e)
		if err != nil {
			t.Fatalf("Decode(%q) = %+v, which Encode refuses: %v", payload, e, err)
		}
		if e.Kind != bus.SitePurged && p != payload {
			t.Fatalf("Decode(%q) = %+v, encoded %q", payload, e, p)
		}
		again, err := bus.Decode(p)
		if err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("Decode(%q) = %+v; its encoding %q decodes to %+v, %v", payload, e, p, again, err)
		}
	})
}
