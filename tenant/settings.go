package tenant

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/auth"
)

// MaxSettingsSize bounds a settings document.
const MaxSettingsSize = 64 << 10

// Bounds of the settings' fields.
const (
	maxAdminSecrets   = 16
	minAdminSecretLen = 16 // plaintext, on write
	maxSecretLen      = 1024
	minPresignKeyLen  = 32 // as auth.NewSigner
	maxRoleLen        = 100
	maxRate           = 1e6
	maxBurst          = 1_000_000
	minBytesPerSecond = 1024
	maxImageConc      = 64
)

// Settings is a tenant's settings document, kept opaque as coffer.Tenant.Settings.
// As written by a client, secrets are in plaintext; Prepare hashes the admin
// secrets and seals the presign key and S3 secret key before it is stored, so a
// stored document holds only "sha256:<hex>" hashes and "v1:..." sealed values.
// Redacted is the form any answer shows.
type Settings struct {
	// AdminSecrets are accepted in x-hasura-admin-secret (any of them, so one can
	// be rotated without downtime): "sha256:<64 hex>" once prepared.
	AdminSecrets []string `json:"adminSecrets,omitempty"`
	// JWT is the same document as the --jwt-secret flag (Hasura's JSON form):
	// the tenant's own issuer and keys. The HMAC secret of an HS* document is
	// sealed once prepared (JWTConfig opens it).
	JWT json.RawMessage `json:"jwt,omitempty"`
	// PresignKey signs the tenant's presigned URLs (>= 32 bytes); sealed once prepared.
	PresignKey string `json:"presignKey,omitempty"`
	// UnauthorizedRole is the role of requests without credentials ("" = the server's).
	UnauthorizedRole string  `json:"unauthorizedRole,omitempty"`
	Storage          Storage `json:"storage,omitzero"`
	Limits           Limits  `json:"limits,omitzero"`
}

// Storage kinds.
const (
	StorageShared = "shared" // the server's store, under a prefix of the tenant's own
	StorageS3     = "s3"     // the tenant's own S3 bucket
)

// Storage is where a tenant's blobs go.
type Storage struct {
	Kind            string `json:"kind,omitempty"`     // StorageShared ("" too) or StorageS3
	Endpoint        string `json:"endpoint,omitempty"` // http(s)://host[:port]; "" = AWS
	Region          string `json:"region,omitempty"`
	Bucket          string `json:"bucket,omitempty"`
	Prefix          string `json:"prefix,omitempty"` // key prefix inside Bucket
	AccessKeyID     string `json:"accessKeyId,omitempty"`
	SecretAccessKey string `json:"secretAccessKey,omitempty"` // sealed once prepared
	PathStyle       bool   `json:"pathStyle,omitempty"`
}

// Limits are a tenant's rate and bandwidth limits; 0 means none.
type Limits struct {
	RequestsPerSecond     float64 `json:"requestsPerSecond,omitempty"`     // the whole tenant
	Burst                 int     `json:"burst,omitempty"`                 // 0: one second's worth
	UserRequestsPerSecond float64 `json:"userRequestsPerSecond,omitempty"` // each user of the tenant
	UserBurst             int     `json:"userBurst,omitempty"`             // 0: one second's worth
	BytesPerSecond        int64   `json:"bytesPerSecond,omitempty"`        // download bandwidth of the tenant
	ImageConcurrency      int     `json:"imageConcurrency,omitempty"`      // transformations at once
}

// Parse decodes and validates a settings document: one JSON object, no unknown
// fields, no trailing data. An empty document is empty settings. Returns EINVALID
// with the field at fault, ETOOLARGE past MaxSettingsSize.
func Parse(doc []byte) (*Settings, error) {
	s := &Settings{}
	if len(doc) > MaxSettingsSize {
		return nil, coffer.Errorf(coffer.ETOOLARGE, "settings: larger than %d bytes", MaxSettingsSize)
	}
	if len(bytes.TrimSpace(doc)) == 0 {
		return s, nil
	}
	if err := coffer.DecodeDocument(doc, s, "settings"); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// invalid returns the EINVALID error of the field at, naming it as Field.
func invalid(at, format string, args ...any) error {
	return coffer.InvalidField(at, at+": "+fmt.Sprintf(format, args...))
}

// Validate checks every field, in written (plaintext) or stored form. Errors are
// EINVALID with Field the path in the document ("storage.bucket",
// "adminSecrets[1]"); none repeats a secret.
func (s *Settings) Validate() error {
	checks := []func() error{s.validateSecrets, s.validateJWT, s.validateRole, s.Storage.validate, s.Limits.validate}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateSecrets checks the admin secrets and the presign key.
func (s *Settings) validateSecrets() error {
	if len(s.AdminSecrets) > maxAdminSecrets {
		return invalid("adminSecrets", "at most %d", maxAdminSecrets)
	}
	for i, a := range s.AdminSecrets {
		at := fmt.Sprintf("adminSecrets[%d]", i)
		switch {
		case strings.HasPrefix(a, hashPrefix) && !isHash(a):
			return invalid(at, `a stored secret is "sha256:" and 64 lower-case hex digits`)
		case !isHash(a) && (len(a) < minAdminSecretLen || len(a) > maxSecretLen):
			return invalid(at, "must be %d to %d bytes", minAdminSecretLen, maxSecretLen)
		}
	}
	k := s.PresignKey
	if k != "" && !IsSealed(k) && (len(k) < minPresignKeyLen || len(k) > maxSecretLen) {
		return invalid("presignKey", "must be %d to %d bytes", minPresignKeyLen, maxSecretLen)
	}
	return nil
}

// validateJWT parses the JWT document the way --jwt-secret is parsed.
func (s *Settings) validateJWT() error {
	if len(s.JWT) == 0 || string(s.JWT) == "null" {
		return nil
	}
	if _, err := auth.ParseJWTConfig(string(s.JWT)); err != nil {
		return coffer.InvalidField("jwt", coffer.ErrorMessage(err))
	}
	return nil
}

// validateRole checks the unauthorized role: printable ASCII without spaces.
func (s *Settings) validateRole() error {
	r := s.UnauthorizedRole
	if len(r) > maxRoleLen {
		return invalid("unauthorizedRole", "longer than %d bytes", maxRoleLen)
	}
	for i := 0; i < len(r); i++ {
		if r[i] <= ' ' || r[i] >= 0x7f {
			return invalid("unauthorizedRole", "only printable ASCII without spaces")
		}
	}
	return nil
}

// validate checks the limits: none negative or absurd, no burst without a rate.
func (l Limits) validate() error {
	switch {
	case l.RequestsPerSecond < 0 || l.RequestsPerSecond > maxRate:
		return invalid("limits.requestsPerSecond", "must be 0 (none) to %g", float64(maxRate))
	case l.UserRequestsPerSecond < 0 || l.UserRequestsPerSecond > maxRate:
		return invalid("limits.userRequestsPerSecond", "must be 0 (none) to %g", float64(maxRate))
	case l.Burst < 0 || l.Burst > maxBurst || l.Burst > 0 && l.RequestsPerSecond == 0:
		return invalid("limits.burst", "must be 0 to %d, and only with requestsPerSecond", maxBurst)
	case l.UserBurst < 0 || l.UserBurst > maxBurst || l.UserBurst > 0 && l.UserRequestsPerSecond == 0:
		return invalid("limits.userBurst", "must be 0 to %d, and only with userRequestsPerSecond", maxBurst)
	case l.BytesPerSecond != 0 && l.BytesPerSecond < minBytesPerSecond:
		return invalid("limits.bytesPerSecond", "must be 0 (none) or at least %d", minBytesPerSecond)
	case l.ImageConcurrency < 0 || l.ImageConcurrency > maxImageConc:
		return invalid("limits.imageConcurrency", "must be 0 (the server's) to %d", maxImageConc)
	}
	return nil
}
