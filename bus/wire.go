package bus

import (
	"encoding/json"
	"strings"

	"github.com/coffer/coffer"
)

// The wire tags: a payload is "<tag>:<rest>", or "*" (Everything) or "r" (the
// default tenant's rules).
const (
	tagFile    = 'f'
	tagBucket  = 'b'
	tagRules   = 'r'
	tagTenant  = 't'
	tagGone    = 'g'
	tagSites   = 's'
	tagPurge   = 'p'
	everything = "*"
	rulesOfDef = "r"
)

// purgeWire is a SitePurged event's JSON after "p:".
type purgeWire struct {
	Tenant string `json:"t"`
	Site   string `json:"s"`
	Purge  Purge  `json:"p"`
}

// Encode returns e's wire form (see the kinds). EINVALID for an unknown kind, a
// field the kind does not carry, a missing one (a file, bucket or site id; the
// tenant of TenantChanged and TenantGone), or a '/' in a tenant or in a file or
// bucket id (it separates the two on the wire).
func Encode(e Event) (string, error) {
	if err := check(e); err != nil {
		return "", err
	}
	switch e.Kind {
	case Everything:
		return everything, nil
	case FileChanged, BucketChanged:
		s := string(tag(e.Kind)) + ":"
		if e.Tenant != "" {
			s += e.Tenant + "/"
		}
		return s + e.ID, nil
	case RulesChanged:
		if e.Tenant == "" {
			return rulesOfDef, nil
		}
	case SitePurged:
		b, err := json.Marshal(purgeWire{Tenant: e.Tenant, Site: e.ID, Purge: e.Purge})
		return "p:" + string(b), err
	}
	return string(tag(e.Kind)) + ":" + e.Tenant, nil
}

// tags pairs each kind but Everything with its wire tag.
var tags = [...]struct {
	kind Kind
	tag  byte
}{{FileChanged, tagFile}, {BucketChanged, tagBucket}, {RulesChanged, tagRules}, {TenantChanged, tagTenant},
	{TenantGone, tagGone}, {SitesChanged, tagSites}, {SitePurged, tagPurge}}

// tag returns k's wire tag (0 for Everything and unknown kinds).
func tag(k Kind) byte {
	for _, t := range tags {
		if t.kind == k {
			return t.tag
		}
	}
	return 0
}

// kindOf returns the kind of wire tag b (0 for none).
func kindOf(b byte) Kind {
	for _, t := range tags {
		if t.tag == b {
			return t.kind
		}
	}
	return 0
}

// check returns EINVALID if e cannot be encoded, or would not decode back to itself.
func check(e Event) error {
	if e.Kind != Everything && tag(e.Kind) == 0 {
		return coffer.Errorf(coffer.EINVALID, "cluster event of unknown kind %v", e.Kind)
	}
	hasID := e.Kind == FileChanged || e.Kind == BucketChanged || e.Kind == SitePurged
	switch {
	case strings.Contains(e.Tenant, "/"):
		return coffer.Errorf(coffer.EINVALID, "cluster event: tenant %q holds a '/'", e.Tenant)
	case e.Kind == Everything && e.Tenant != "":
		return coffer.Errorf(coffer.EINVALID, "cluster event: Everything names no tenant")
	case (e.Kind == TenantChanged || e.Kind == TenantGone) && e.Tenant == "":
		return coffer.Errorf(coffer.EINVALID, "cluster event: the default tenant has no registry row")
	case hasID != (e.ID != ""):
		return coffer.Errorf(coffer.EINVALID, "cluster event %v: id %q (one is needed for files, buckets and sites only)", e.Kind, e.ID)
	case e.Kind != SitePurged && strings.Contains(e.ID, "/"):
		return coffer.Errorf(coffer.EINVALID, "cluster event: id %q holds a '/'", e.ID)
	case e.Kind != SitePurged && !e.Purge.empty():
		return coffer.Errorf(coffer.EINVALID, "cluster event: only a site purge carries what to purge")
	}
	return nil
}

func (p Purge) empty() bool { return len(p.Paths) == 0 && len(p.Prefixes) == 0 && len(p.Tags) == 0 }

// Decode reads a payload as Encode writes it (and as the store's triggers and nodes
// of earlier versions send it). EINVALID for anything else: an unknown tag, a
// missing or empty part, a '/' where Encode allows none, a purge that is not its
// JSON object. Decode(Encode(e)) is e (with empty purge lists as nil).
func Decode(payload string) (Event, error) {
	switch payload {
	case everything:
		return Event{Kind: Everything}, nil
	case rulesOfDef:
		return Event{Kind: RulesChanged}, nil
	}
	if len(payload) < 2 || payload[1] != ':' {
		return Event{}, undecodable(payload)
	}
	e := Event{Kind: kindOf(payload[0]), Tenant: payload[2:]}
	switch e.Kind {
	case 0:
		return Event{}, undecodable(payload)
	case FileChanged, BucketChanged:
		e.Tenant, e.ID = "", payload[2:]
		if t, id, ok := strings.Cut(payload[2:], "/"); ok {
			if t == "" {
				return Event{}, undecodable(payload)
			}
			e.Tenant, e.ID = t, id
		}
	case RulesChanged:
		if e.Tenant == "" { // "r" is the default tenant's
			return Event{}, undecodable(payload)
		}
	case SitePurged:
		var w purgeWire
		if err := json.Unmarshal([]byte(payload[2:]), &w); err != nil {
			return Event{}, undecodable(payload)
		}
		e = Event{Kind: SitePurged, Tenant: w.Tenant, ID: w.Site, Purge: w.Purge.normal()}
	}
	if check(e) != nil {
		return Event{}, undecodable(payload)
	}
	return e, nil
}

// normal returns p with its empty lists nil (omitted on the wire either way).
func (p Purge) normal() Purge {
	for _, l := range []*[]string{&p.Paths, &p.Prefixes, &p.Tags} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return p
}

func undecodable(payload string) error {
	return coffer.Errorf(coffer.EINVALID, "undecodable cluster message %.60q", payload)
}
