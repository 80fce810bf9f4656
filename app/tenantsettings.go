package app

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/s3blob"
	"github.com/coffer/coffer/tenant"
)

// tenantSettings is a tenant's settings as its graph is built from them: the
// stored document (tenant.Settings) with its secrets opened and its admin secrets as
// digests.
type tenantSettings struct {
	AdminSecretHashes [][32]byte
	JWT               *auth.JWTConfig // nil: no JWTs
	PresignKey        []byte          // nil: derived from the server key (tenantPresignKey)
	UnauthorizedRole  string
	Storage           tenant.Storage // SecretAccessKey opened
	Limits            tenant.Limits
}

// settings opens tenant t's stored settings.
func (tn *tenancy) settings(t *coffer.Tenant) (tenantSettings, error) {
	doc, err := tenant.Parse(t.Settings)
	if err != nil {
		return tenantSettings{}, fmt.Errorf("tenant %s: stored settings: %w", t.ID, err)
	}
	out := tenantSettings{UnauthorizedRole: doc.UnauthorizedRole, Storage: doc.Storage, Limits: doc.Limits}
	if out.JWT, err = doc.JWTConfig(tn.sealer, t.ID); err != nil {
		return tenantSettings{}, fmt.Errorf("tenant %s: JWT: %w", t.ID, err)
	}
	for _, h := range doc.AdminSecrets {
		var d [32]byte
		raw, err := hex.DecodeString(strings.TrimPrefix(h, "sha256:"))
		if err != nil || len(raw) != len(d) || !strings.HasPrefix(h, "sha256:") {
			return tenantSettings{}, fmt.Errorf("tenant %s: a stored admin secret is not a sha256 digest", t.ID)
		}
		copy(d[:], raw)
		out.AdminSecretHashes = append(out.AdminSecretHashes, d)
	}
	key, err := doc.OpenPresignKey(tn.sealer, t.ID)
	if err != nil {
		return tenantSettings{}, fmt.Errorf("tenant %s: presign key: %w", t.ID, err)
	}
	if key != "" {
		out.PresignKey = []byte(key)
	}
	if out.Storage.SecretAccessKey, err = doc.OpenSecretAccessKey(tn.sealer, t.ID); err != nil {
		return tenantSettings{}, fmt.Errorf("tenant %s: S3 secret key: %w", t.ID, err)
	}
	return out, nil
}

// openTenantS3 opens a tenant's own S3 bucket, under its prefix.
func openTenantS3(ctx context.Context, st tenant.Storage) (*blob.Store, error) {
	cfg := s3blob.DefaultConfig()
	cfg.Endpoint, cfg.Bucket, cfg.Region = st.Endpoint, st.Bucket, st.Region
	cfg.AccessKey, cfg.SecretKey, cfg.PathStyle = st.AccessKeyID, st.SecretAccessKey, st.PathStyle
	if cfg.Endpoint == "" {
		cfg.Endpoint = "https://s3.amazonaws.com"
	}
	if cfg.Region == "" {
		cfg.Region = s3blob.DefaultConfig().Region
	}
	d, err := s3blob.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("the tenant's S3 bucket: %w", err)
	}
	store := blob.New(d)
	if p := strings.Trim(st.Prefix, "/"); p != "" {
		return store.Under(p + "/"), nil
	}
	return store, nil
}

// tenantPublicURL is the base URL of tenant t's presigned URLs: the server's public
// URL with the tenant's first host in place of its host (the port kept), else its
// name under the first wildcard, else (a tenant chosen by path prefix) the server's
// URL and /t/<id>.
func tenantPublicURL(server string, t *coffer.Tenant, wildcards []string) string {
	u, err := url.Parse(server)
	var host string
	switch {
	case err != nil:
	case len(t.Hosts) > 0:
		host = t.Hosts[0]
	case len(wildcards) > 0:
		host = t.ID + strings.TrimPrefix(wildcards[0], "*")
	}
	if host == "" {
		return strings.TrimRight(server, "/") + "/t/" + t.ID
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	return u.Scheme + "://" + host
}
