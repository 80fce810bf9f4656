package rpcapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/site"
)

// SiteService's conversions: a site crosses SiteAdmin as *site.Document, converted
// from and to adminv1.Site field by field here (siteOf, SiteMessage), and nowhere
// else. siteArg and sitePB add the face's policy: output-only fields ignored in
// requests, secrets dropped from answers. Ids, purge lists and the document's size
// are bounded here; sites are validated behind SiteAdmin (site.Document.Validate, whose
// field paths, "routes[2].target.http.url", the conversion's own errors follow).
const (
	maxSiteID      = 63   // site.Document.ID's longest
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

// siteArg converts pb as a request gives it: the output-only fields ignored, and
// the id set to id unless it is "". EINVALID if pb is unset or a duration is not a
// valid protobuf Duration (the field named), ETOOLARGE past site.MaxDocSize as the
// site's JSON document. The request's message is not changed.
func siteArg(pb *adminv1.Site, id string) (*site.Document, error) {
	if pb == nil {
		return nil, coffer.InvalidField("site", "a site is required")
	}
	s, err := siteOf(pb)
	if err != nil {
		return nil, err
	}
	if id != "" {
		s.ID = id
	}
	s.CreatedAt, s.UpdatedAt = time.Time{}, time.Time{}
	for i := range s.PurgeWebhooks {
		s.PurgeWebhooks[i].SecretSet = false
	}
	for _, r := range s.Routes {
		if r.Target.S3 != nil {
			r.Target.S3.SecretAccessKeySet = false
		}
	}
	doc, err := json.Marshal(s)
	if err != nil {
		return nil, coffer.InvalidField("site", "the site cannot be encoded: "+err.Error())
	}
	if len(doc) > site.MaxDocSize {
		return nil, coffer.Errorf(coffer.ETOOLARGE, "site: larger than %d bytes", site.MaxDocSize)
	}
	return s, nil
}

// sitePB converts a site SiteAdmin returned and drops any secret it holds, setting
// the flags that say they are set (an HTTP origin's headers: their names in
// headers_set). No site is EINTERNAL.
func sitePB(s *site.Document) (*adminv1.Site, error) {
	if s == nil {
		return nil, coffer.Internal(errors.New("no site"), "a site answer")
	}
	pb := SiteMessage(s)
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
	return pb, nil
}

// siteOf converts a Site message field for field, copying its lists and maps (an
// empty one becomes nil, as a document without it decodes). EINVALID naming the
// field if a duration is not a valid protobuf Duration; a negative or too long one
// is Validate's to refuse.
func siteOf(pb *adminv1.Site) (*site.Document, error) {
	d := &durations{}
	s := &site.Document{ID: pb.GetId(), Hosts: strs(pb.GetHosts()), NotFound: pb.GetNotFound(),
		Audit: boolPtr(pb.Audit), CreatedAt: timeOf(pb.GetCreatedAt()), UpdatedAt: timeOf(pb.GetUpdatedAt())}
	for i, r := range pb.GetRoutes() {
		s.Routes = append(s.Routes, routeOf(d, fmt.Sprintf("routes[%d]", i), r))
	}
	for _, h := range pb.GetHeaders() {
		s.Headers = append(s.Headers, site.HeaderRule{Match: h.GetMatch(), Set: strMap(h.GetSet())})
	}
	for _, w := range pb.GetPurgeWebhooks() {
		s.PurgeWebhooks = append(s.PurgeWebhooks, site.PurgeWebhook{URL: w.GetUrl(), Secret: w.GetSecret(), SecretSet: w.GetSecretSet()})
	}
	if d.err != nil {
		return nil, d.err
	}
	return s, nil
}

// routeOf converts a route; at is its path in the document ("routes[2]").
func routeOf(d *durations, at string, r *adminv1.Route) site.Route {
	out := site.Route{Path: r.GetPath(), StripPrefix: r.GetStripPrefix(), Target: targetOf(d, at+".target", r.GetTarget()),
		Index: r.GetIndex(), Fallback: r.GetFallback(), NotFound: r.GetNotFound(), Headers: strMap(r.GetHeaders()),
		Tags: strs(r.GetTags()), Compress: boolPtr(r.Compress)}
	for _, c := range r.GetCacheControl() {
		out.CacheControl = append(out.CacheControl, site.CacheRule{Match: c.GetMatch(), Value: c.GetValue()})
	}
	if e := r.GetEdge(); e != nil {
		out.Edge = site.EdgePolicy{TTL: d.of(at+".edge.ttl", e.GetTtl()),
			StaleWhileRevalidate: d.of(at+".edge.staleWhileRevalidate", e.GetStaleWhileRevalidate()),
			StaleIfError:         d.of(at+".edge.staleIfError", e.GetStaleIfError())}
		if e.GetNegativeTtl() != nil {
			neg := d.of(at+".edge.negativeTtl", e.GetNegativeTtl())
			out.Edge.NegativeTTL = &neg
		}
	}
	return out
}

// targetOf converts a target (unset: none, which Validate refuses).
func targetOf(d *durations, at string, t *adminv1.Target) site.Target {
	switch k := t.GetKind().(type) {
	case *adminv1.Target_Bucket:
		b := k.Bucket
		return site.Target{Bucket: &site.BucketTarget{ID: b.GetId(), Prefix: b.GetPrefix(), Trusted: b.GetTrusted()}}
	case *adminv1.Target_Http:
		h := k.Http
		return site.Target{HTTP: &site.HTTPOrigin{URL: h.GetUrl(), Headers: strMap(h.GetHeaders()),
			Timeout: d.of(at+".http.timeout", h.GetTimeout()), HeadersSet: strs(h.GetHeadersSet()),
			Precompressed: h.GetPrecompressed()}}
	case *adminv1.Target_S3:
		o := k.S3
		return site.Target{S3: &site.S3Origin{Endpoint: o.GetEndpoint(), Region: o.GetRegion(), Bucket: o.GetBucket(),
			Prefix: o.GetPrefix(), AccessKeyID: o.GetAccessKeyId(), SecretAccessKey: o.GetSecretAccessKey(),
			PathStyle: o.GetPathStyle(), Timeout: d.of(at+".s3.timeout", o.GetTimeout()),
			SecretAccessKeySet: o.GetSecretAccessKeySet()}}
	case *adminv1.Target_Redirect:
		return site.Target{Redirect: &site.Redirect{To: k.Redirect.GetTo(), Status: int(k.Redirect.GetStatus())}}
	}
	return site.Target{}
}

// durations converts protobuf durations, keeping the first invalid one's error.
type durations struct{ err error }

// of converts d (unset: 0); at names it in the error if it is invalid.
func (c *durations) of(at string, d *durationpb.Duration) site.Duration {
	if d == nil {
		return 0
	}
	if err := d.CheckValid(); err != nil {
		if c.err == nil {
			c.err = coffer.InvalidField(at, at+": not a valid duration")
		}
		return 0
	}
	return site.Duration(d.AsDuration())
}

// SiteMessage converts a site to its message field for field, secrets included (a
// client sending a site it read from a document; sitePB drops them from answers).
func SiteMessage(s *site.Document) *adminv1.Site {
	pb := &adminv1.Site{Id: s.ID, Hosts: strs(s.Hosts), NotFound: s.NotFound, Audit: boolPtr(s.Audit),
		CreatedAt: ts(s.CreatedAt), UpdatedAt: ts(s.UpdatedAt)}
	for _, r := range s.Routes {
		pb.Routes = append(pb.Routes, routePB(r))
	}
	for _, h := range s.Headers {
		pb.Headers = append(pb.Headers, &adminv1.HeaderRule{Match: h.Match, Set: strMap(h.Set)})
	}
	for _, w := range s.PurgeWebhooks {
		pb.PurgeWebhooks = append(pb.PurgeWebhooks, &adminv1.PurgeWebhook{Url: w.URL, Secret: w.Secret, SecretSet: w.SecretSet})
	}
	return pb
}

// routePB converts a route.
func routePB(r site.Route) *adminv1.Route {
	out := &adminv1.Route{Path: r.Path, StripPrefix: r.StripPrefix, Target: targetPB(r.Target), Index: r.Index,
		Fallback: r.Fallback, NotFound: r.NotFound, Headers: strMap(r.Headers), Tags: strs(r.Tags),
		Compress: boolPtr(r.Compress)}
	for _, c := range r.CacheControl {
		out.CacheControl = append(out.CacheControl, &adminv1.CacheRule{Match: c.Match, Value: c.Value})
	}
	if e := r.Edge; e != (site.EdgePolicy{}) {
		out.Edge = &adminv1.EdgePolicy{Ttl: durationPB(e.TTL), StaleWhileRevalidate: durationPB(e.StaleWhileRevalidate),
			StaleIfError: durationPB(e.StaleIfError)}
		if e.NegativeTTL != nil {
			out.Edge.NegativeTtl = durationpb.New(e.NegativeTTL.D())
		}
	}
	return out
}

// targetPB converts a target (none: a Target without a kind).
func targetPB(t site.Target) *adminv1.Target {
	out := &adminv1.Target{}
	switch {
	case t.Bucket != nil:
		out.Kind = &adminv1.Target_Bucket{Bucket: &adminv1.BucketTarget{Id: t.Bucket.ID, Prefix: t.Bucket.Prefix,
			Trusted: t.Bucket.Trusted}}
	case t.HTTP != nil:
		h := t.HTTP
		out.Kind = &adminv1.Target_Http{Http: &adminv1.HTTPOrigin{Url: h.URL, Headers: strMap(h.Headers),
			Timeout: durationPB(h.Timeout), HeadersSet: strs(h.HeadersSet), Precompressed: h.Precompressed}}
	case t.S3 != nil:
		o := t.S3
		out.Kind = &adminv1.Target_S3{S3: &adminv1.S3Origin{Endpoint: o.Endpoint, Region: o.Region, Bucket: o.Bucket,
			Prefix: o.Prefix, AccessKeyId: o.AccessKeyID, SecretAccessKey: o.SecretAccessKey,
			SecretAccessKeySet: o.SecretAccessKeySet, PathStyle: o.PathStyle, Timeout: durationPB(o.Timeout)}}
	case t.Redirect != nil:
		out.Kind = &adminv1.Target_Redirect{Redirect: &adminv1.Redirect{To: t.Redirect.To, Status: int32(t.Redirect.Status)}}
	}
	return out
}

// durationPB converts a duration, leaving 0 unset.
func durationPB(d site.Duration) *durationpb.Duration {
	if d == 0 {
		return nil
	}
	return durationpb.New(d.D())
}

// timeOf converts a timestamp (unset: the zero time).
func timeOf(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

// strs copies a list, nil when empty.
func strs(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return slices.Clone(l)
}

// strMap copies a map, nil when empty.
func strMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// boolPtr copies an optional bool.
func boolPtr(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
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
