package site

import (
	"fmt"
	"sort"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// Field names sealed values are bound to (with the tenant, so a sealed value
// copied to another tenant or field does not open there; not with the site id,
// so the origin factory, which is given the tenant only, can open it).
const (
	fieldS3Secret      = "s3.secretAccessKey"
	fieldWebhookSecret = "purgeWebhooks.secret"
)

// sealContext binds a sealed value to its tenant and field.
func sealContext(tenantID, field string) string {
	return "coffer site\x00" + tenantID + "\x00" + field
}

// Prepare turns a written site into its stored form for tenantID: the S3
// origins' secret keys and the purge webhooks' secrets are sealed. Values already
// sealed are kept (they must open with this key, tenant and field).
// An accessKeyId without its secret key (an update that omitted it and found
// none to keep) is refused. Validates first; returns EINVALID.
func (s *Document) Prepare(sealer *tenant.Sealer, tenantID string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	for i := range s.Routes {
		if o := s.Routes[i].Target.S3; o != nil {
			at := fmt.Sprintf("routes[%d].target.s3.secretAccessKey", i)
			if o.AccessKeyID != "" && o.SecretAccessKey == "" {
				return invalid(at, "required with an accessKeyId")
			}
			if err := seal(sealer, &o.SecretAccessKey, sealContext(tenantID, fieldS3Secret), at); err != nil {
				return err
			}
		}
	}
	for i := range s.PurgeWebhooks {
		h := &s.PurgeWebhooks[i]
		at := fmt.Sprintf("purgeWebhooks[%d].secret", i)
		if err := seal(sealer, &h.Secret, sealContext(tenantID, fieldWebhookSecret), at); err != nil {
			return err
		}
	}
	return nil
}

// seal seals *v in place unless it is empty or already sealed for ctx.
func seal(sealer *tenant.Sealer, v *string, ctx, at string) error {
	switch {
	case *v == "":
		return nil
	case tenant.IsSealed(*v):
		if _, err := sealer.Open(*v, ctx); err != nil {
			return invalid(at, "%s", coffer.ErrorMessage(err))
		}
		return nil
	}
	*v = sealer.Seal(*v, ctx)
	return nil
}

// OpenSecretAccessKey returns the S3 origin's secret key in plaintext ("" if
// none) for the origin factory. Returns EINVALID if it does not open (another
// server key or tenant) or was never sealed.
func (o *S3Origin) OpenSecretAccessKey(sealer *tenant.Sealer, tenantID string) (string, error) {
	return openSealed(sealer, o.SecretAccessKey, sealContext(tenantID, fieldS3Secret))
}

// OpenSecret returns the webhook's secret in plaintext ("" if none).
func (h *PurgeWebhook) OpenSecret(sealer *tenant.Sealer, tenantID string) (string, error) {
	return openSealed(sealer, h.Secret, sealContext(tenantID, fieldWebhookSecret))
}

// openSealed opens a sealed value; "" is "".
func openSealed(sealer *tenant.Sealer, v, ctx string) (string, error) {
	if v == "" {
		return "", nil
	}
	return sealer.Open(v, ctx)
}

// Redacted returns a deep enough copy of s for answers: secrets blanked, with
// SecretAccessKeySet and SecretSet saying whether one is set, and an HTTP origin's
// headers replaced by their names in HeadersSet.
func (s *Document) Redacted() *Document {
	c := *s
	c.Routes = append([]Route(nil), s.Routes...)
	for i := range c.Routes {
		if o := c.Routes[i].Target.S3; o != nil {
			r := *o
			r.SecretAccessKeySet, r.SecretAccessKey = o.SecretAccessKey != "", ""
			c.Routes[i].Target.S3 = &r
		}
		if o := c.Routes[i].Target.HTTP; o != nil {
			r := *o
			r.HeadersSet, r.Headers = headerNames(o.Headers), nil
			c.Routes[i].Target.HTTP = &r
		}
	}
	c.PurgeWebhooks = append([]PurgeWebhook(nil), s.PurgeWebhooks...)
	for i := range c.PurgeWebhooks {
		h := &c.PurgeWebhooks[i]
		h.SecretSet, h.Secret = h.Secret != "", ""
	}
	return &c
}

// headerNames returns the names of h, sorted (nil for none).
func headerNames(h map[string]string) []string {
	if len(h) == 0 {
		return nil
	}
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// KeepSecrets copies old's secrets into s (an update; nil for a new site) where s
// omits them for the same origin: an S3 origin with the same endpoint and bucket,
// a webhook with the same URL, and the headers an HTTP origin names in HeadersSet
// from old's origin of the same URL. A secret never follows to another endpoint or
// URL, so a changed destination needs its secret again. Call it before Prepare.
// Returns EINVALID for a name in HeadersSet without a stored value to keep.
func (s *Document) KeepSecrets(old *Document) error {
	if old != nil && old.ID != s.ID {
		old = nil // an update of the same site only
	}
	if err := s.keepHeaders(old); err != nil {
		return err
	}
	if old == nil {
		return nil
	}
	for i := range s.Routes {
		o := s.Routes[i].Target.S3
		if o == nil || o.SecretAccessKey != "" {
			continue
		}
		for j := range old.Routes {
			p := old.Routes[j].Target.S3
			if p != nil && p.Endpoint == o.Endpoint && p.Bucket == o.Bucket && p.AccessKeyID == o.AccessKeyID {
				o.SecretAccessKey = p.SecretAccessKey
				break
			}
		}
	}
	for i := range s.PurgeWebhooks {
		h := &s.PurgeWebhooks[i]
		for j := range old.PurgeWebhooks {
			if h.Secret == "" && old.PurgeWebhooks[j].URL == h.URL {
				h.Secret = old.PurgeWebhooks[j].Secret
			}
		}
	}
	return nil
}

// keepHeaders gives each HTTP origin of s the stored value of every header its
// HeadersSet names and its Headers do not set, from old's first HTTP origin with
// the same URL, and clears HeadersSet.
func (s *Document) keepHeaders(old *Document) error {
	for i := range s.Routes {
		o := s.Routes[i].Target.HTTP
		if o == nil || len(o.HeadersSet) == 0 {
			continue
		}
		stored := oldHeaders(old, o.URL)
		for j, name := range o.HeadersSet {
			if _, ok := lookupHeader(o.Headers, name); ok {
				continue
			}
			k, ok := lookupHeader(stored, name)
			if !ok {
				return invalid(fmt.Sprintf("routes[%d].target.http.headersSet[%d]", i, j),
					"%q has no stored value to keep (a new origin URL needs its headers again)", name)
			}
			if o.Headers == nil {
				o.Headers = make(map[string]string, len(o.HeadersSet))
			}
			o.Headers[k] = stored[k]
		}
		o.HeadersSet = nil
	}
	return nil
}

// oldHeaders returns the headers of old's first HTTP origin of URL u (nil if none).
func oldHeaders(old *Document, u string) map[string]string {
	if old == nil {
		return nil
	}
	for _, r := range old.Routes {
		if o := r.Target.HTTP; o != nil && o.URL == u {
			return o.Headers
		}
	}
	return nil
}

// lookupHeader returns the key of h naming the header name (case-insensitively).
func lookupHeader(h map[string]string, name string) (string, bool) {
	for k := range h {
		if strings.EqualFold(k, name) {
			return k, true
		}
	}
	return "", false
}
