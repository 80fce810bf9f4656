package rpcapi

import (
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/site"
)

// SiteService's conversions: a site crosses SiteAdmin as *site.Site. adminv1.Site
// mirrors site.Site's JSON field for field (sitemirror_test.go checks it), so the
// conversion goes through that JSON, here and nowhere else: the protojson of the
// message is decoded strictly into site.Site (as site.Parse decodes, with the same
// field names in its errors), and an answered site.Site's JSON is read by protojson.
// Ids, purge lists and the document's size are bounded here; sites are validated
// behind SiteAdmin.
const (
	maxSiteID      = 63   // site.Site.ID's longest
	maxPurgeList   = 1000 // paths, prefixes or tags in one purge
	maxPurgeString = 4096 // one path, prefix or tag
)

// siteID refuses an empty or oversized site id; field names it.
func siteID(field, id string) (string, error) {
	switch {
	case id == "":
		return "", coffer.InvalidField(field, "a site id is required")
	case len(id) > maxSiteID:
		return "", coffer.InvalidField(field, fmt.Sprintf("a site id is at most %d characters", maxSiteID))
	}
	return id, nil
}

// siteArg converts pb as a request gives it: the output-only fields cleared, and
// the id set to id unless it is "". EINVALID if pb is unset or its fields do not
// decode (the field named), ETOOLARGE past site.MaxDocSize as JSON.
func siteArg(pb *adminv1.Site, id string) (*site.Site, error) {
	if pb == nil {
		return nil, coffer.InvalidField("site", "a site is required")
	}
	in := proto.Clone(pb).(*adminv1.Site) // the request's message is not changed
	in.CreatedAt, in.UpdatedAt = nil, nil
	if id != "" {
		in.Id = id
	}
	for _, w := range in.GetPurgeWebhooks() {
		w.SecretSet = false
	}
	for _, r := range in.GetRoutes() {
		if s3 := r.GetTarget().GetS3(); s3 != nil {
			s3.SecretAccessKeySet = false
		}
	}
	doc, err := protojson.MarshalOptions{}.Marshal(in)
	if err != nil {
		return nil, coffer.InvalidField("site", "the site cannot be encoded: "+err.Error())
	}
	if len(doc) > site.MaxDocSize {
		return nil, coffer.Errorf(coffer.ETOOLARGE, "site: larger than %d bytes", site.MaxDocSize)
	}
	s := &site.Site{}
	if err := coffer.DecodeDocument(doc, s, "site"); err != nil {
		return nil, err
	}
	return s, nil
}

// sitePB converts a site SiteAdmin returned and drops any secret it holds, setting
// the flags that say they are set (an HTTP origin's headers: their names in
// headers_set). A site the contract cannot read is EINTERNAL: site.Site and
// adminv1.Site have drifted apart.
func sitePB(s *site.Site) (*adminv1.Site, error) {
	doc, err := json.Marshal(s)
	if err != nil {
		return nil, coffer.Internal(err, "encoding a site")
	}
	var pb adminv1.Site
	if err := protojson.Unmarshal(doc, &pb); err != nil {
		return nil, coffer.Internal(err, "a site does not match coffer.admin.v1.Site")
	}
	for _, w := range pb.GetPurgeWebhooks() {
		w.SecretSet = w.SecretSet || w.GetSecret() != ""
		w.Secret = ""
	}
	for _, r := range pb.GetRoutes() {
		if s3 := r.GetTarget().GetS3(); s3 != nil {
			s3.SecretAccessKeySet = s3.SecretAccessKeySet || s3.GetSecretAccessKey() != ""
			s3.SecretAccessKey = ""
		}
		if h := r.GetTarget().GetHttp(); h != nil && len(h.Headers) > 0 {
			for k := range h.Headers {
				if !slices.Contains(h.HeadersSet, k) {
					h.HeadersSet = append(h.HeadersSet, k)
				}
			}
			slices.Sort(h.HeadersSet)
			h.Headers = nil
		}
	}
	return &pb, nil
}

// purgeArg converts a PurgeSiteRequest's lists, bounded.
func purgeArg(r *adminv1.PurgeSiteRequest) (site.Purge, error) {
	p := site.Purge{Paths: r.GetPaths(), Prefixes: r.GetPrefixes(), Tags: r.GetTags()}
	for field, l := range map[string][]string{"paths": p.Paths, "prefixes": p.Prefixes, "tags": p.Tags} {
		if len(l) > maxPurgeList {
			return p, coffer.InvalidField(field, fmt.Sprintf("at most %d in one purge", maxPurgeList))
		}
		for _, s := range l {
			if s == "" || len(s) > maxPurgeString {
				return p, coffer.InvalidField(field, fmt.Sprintf("each is 1 to %d bytes", maxPurgeString))
			}
		}
	}
	return p, nil
}

// statsPB converts a site's counters, with the hit ratio of its cacheable answers.
func statsPB(st SiteStats) *adminv1.GetSiteStatsResponse {
	out := &adminv1.GetSiteStatsResponse{Requests: st.Requests, Bytes: st.Bytes, Hits: st.Hits,
		Misses: st.Misses, Stale: st.Stale, Revalidated: st.Revalidated, Bypass: st.Bypass}
	if cached := st.Hits + st.Stale + st.Revalidated; cached+st.Misses > 0 {
		out.HitRatio = float64(cached) / float64(cached+st.Misses)
	}
	return out
}
