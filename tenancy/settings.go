package tenancy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
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

// Settings is a tenant's settings as its graph is built from them: the stored
// document (tenant.Settings) with its secrets opened and its admin secrets as
// digests.
type Settings struct {
	AdminSecretHashes [][32]byte
	JWT               *auth.JWTConfig // nil: no JWTs
	PresignKey        []byte          // its own, else derived from the server key
	UnauthorizedRole  string
	Storage           tenant.Storage // SecretAccessKey opened
	Limits            tenant.Limits
}

// settings opens tenant t's stored settings.
func (rt *Runtime) settings(t *coffer.Tenant) (Settings, error) {
	doc, err := tenant.Parse(t.Settings)
	if err != nil {
		return Settings{}, fmt.Errorf("tenant %s: stored settings: %w", t.ID, err)
	}
	out := Settings{UnauthorizedRole: doc.UnauthorizedRole, Storage: doc.Storage, Limits: doc.Limits}
	if out.JWT, err = doc.JWTConfig(rt.sealer, t.ID); err != nil {
		return Settings{}, fmt.Errorf("tenant %s: JWT: %w", t.ID, err)
	}
	for _, h := range doc.AdminSecrets {
		var d [32]byte
		raw, err := hex.DecodeString(strings.TrimPrefix(h, "sha256:"))
		if err != nil || len(raw) != len(d) || !strings.HasPrefix(h, "sha256:") {
			return Settings{}, fmt.Errorf("tenant %s: a stored admin secret is not a sha256 digest", t.ID)
		}
		copy(d[:], raw)
		out.AdminSecretHashes = append(out.AdminSecretHashes, d)
	}
	key, err := doc.OpenPresignKey(rt.sealer, t.ID)
	if err != nil {
		return Settings{}, fmt.Errorf("tenant %s: presign key: %w", t.ID, err)
	}
	out.PresignKey = []byte(key)
	if key == "" {
		out.PresignKey = presignKey(rt.key, t.ID)
	}
	if out.Storage.SecretAccessKey, err = doc.OpenSecretAccessKey(rt.sealer, t.ID); err != nil {
		return Settings{}, fmt.Errorf("tenant %s: S3 secret key: %w", t.ID, err)
	}
	return out, nil
}

// presignKey derives tenant id's presign key from the server's tenant key: the
// same on every node, different for every tenant, so a URL signed for one tenant
// never verifies on another's.
func presignKey(serverKey []byte, id string) []byte {
	m := hmac.New(sha256.New, serverKey)
	m.Write([]byte("coffer tenant presign key v1\x00" + id))
	return m.Sum(nil)
}

// Blobs returns tenant t's blob store, whose storage settings are st: its own S3
// bucket, or its view of the shared store. The caller closes it.
func (rt *Runtime) Blobs(ctx context.Context, t *coffer.Tenant, st tenant.Storage) (*blob.Store, error) {
	if st.Kind != tenant.StorageS3 {
		return rt.deps.Blobs.ForTenant(t.ID), nil
	}
	return openS3(ctx, st)
}

// openS3 opens a tenant's own S3 bucket, under its prefix.
func openS3(ctx context.Context, st tenant.Storage) (*blob.Store, error) {
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

// PublicURL is the base URL of tenant t's presigned URLs: the server's public URL
// with the tenant's first host in place of its host (the port kept), else its name
// under the first wildcard, else (a tenant chosen by path prefix) the server's URL
// and /t/<id>.
func (rt *Runtime) PublicURL(server string, t *coffer.Tenant) string {
	u, err := url.Parse(server)
	var host string
	switch {
	case err != nil:
	case len(t.Hosts) > 0:
		host = t.Hosts[0]
	case len(rt.cfg.Wildcards) > 0:
		host = t.ID + strings.TrimPrefix(rt.cfg.Wildcards[0], "*")
	}
	if host == "" {
		return strings.TrimRight(server, "/") + "/t/" + t.ID
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	return u.Scheme + "://" + host
}
