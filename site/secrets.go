package site

import (
	"fmt"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/tenant"
)

// Field names sealed values are bound to (with the tenant and site id, so a
// sealed value copied to another tenant, site or field does not open there).
const (
	fieldS3Secret      = "s3.secretAccessKey"
	fieldWebhookSecret = "purgeWebhooks.secret"
)

// sealContext binds a sealed value to its tenant, site and field.
func sealContext(tenantID, siteID, field string) string {
	return "coffer site\x00" + tenantID + "\x00" + siteID + "\x00" + field
}

// Prepare turns a written site into its stored form for tenantID: the S3
// origins' secret keys and the purge webhooks' secrets are sealed. Values already
// sealed are kept (they must open with this key, tenant, site and field).
// An accessKeyId without its secret key (an update that omitted it and found
// none to keep) is refused. Validates first; returns EINVALID.
func (s *Site) Prepare(sealer *tenant.Sealer, tenantID string) error {
	if err := s.Validate(); err != nil {
		return err
	}
	for i := range s.Routes {
		if o := s.Routes[i].Target.S3; o != nil {
			at := fmt.Sprintf("routes[%d].target.s3.secretAccessKey", i)
			if o.AccessKeyID != "" && o.SecretAccessKey == "" {
				return invalid(at, "required with an accessKeyId")
			}
			if err := seal(sealer, &o.SecretAccessKey, sealContext(tenantID, s.ID, fieldS3Secret), at); err != nil {
				return err
			}
		}
	}
	for i := range s.PurgeWebhooks {
		h := &s.PurgeWebhooks[i]
		at := fmt.Sprintf("purgeWebhooks[%d].secret", i)
		if err := seal(sealer, &h.Secret, sealContext(tenantID, s.ID, fieldWebhookSecret), at); err != nil {
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
// server key, tenant or site) or was never sealed.
func (o *S3Origin) OpenSecretAccessKey(sealer *tenant.Sealer, tenantID, siteID string) (string, error) {
	return openSealed(sealer, o.SecretAccessKey, sealContext(tenantID, siteID, fieldS3Secret))
}

// OpenSecret returns the webhook's secret in plaintext ("" if none).
func (h *PurgeWebhook) OpenSecret(sealer *tenant.Sealer, tenantID, siteID string) (string, error) {
	return openSealed(sealer, h.Secret, sealContext(tenantID, siteID, fieldWebhookSecret))
}

// openSealed opens a sealed value; "" is "".
func openSealed(sealer *tenant.Sealer, v, ctx string) (string, error) {
	if v == "" {
		return "", nil
	}
	return sealer.Open(v, ctx)
}

// Redacted returns a deep enough copy of s for answers: secrets blanked, with
// SecretAccessKeySet and SecretSet saying whether one is set.
func (s *Site) Redacted() *Site {
	c := *s
	c.Routes = append([]Route(nil), s.Routes...)
	for i := range c.Routes {
		if o := c.Routes[i].Target.S3; o != nil {
			r := *o
			r.SecretAccessKeySet, r.SecretAccessKey = o.SecretAccessKey != "", ""
			c.Routes[i].Target.S3 = &r
		}
	}
	c.PurgeWebhooks = append([]PurgeWebhook(nil), s.PurgeWebhooks...)
	for i := range c.PurgeWebhooks {
		h := &c.PurgeWebhooks[i]
		h.SecretSet, h.Secret = h.Secret != "", ""
	}
	return &c
}

// KeepSecrets copies old's secrets into s (an update) where s omits them for
// the same origin: an S3 origin with the same endpoint and bucket, a webhook
// with the same URL. A secret never follows to another endpoint or URL, so a
// changed destination needs its secret again. Call it before Prepare.
func (s *Site) KeepSecrets(old *Site) {
	if old == nil || old.ID != s.ID {
		return // sealed values are bound to the site id
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
}
