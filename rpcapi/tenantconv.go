package rpcapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/coffer/coffer"
	adminv1 "github.com/coffer/coffer/proto/gen/coffer/admin/v1"
	"github.com/coffer/coffer/tenant"
)

// TenantService's conversions. They bound sizes and refuse empty or non-finite
// values, so that whatever reaches Config.Tenants is small and encodable; ids,
// hosts and settings are validated by the server behind TenantAdmin. The messages
// meet package tenant's types here, and nowhere else.
const (
	maxTenantID      = 63       // coffer.Tenant.ID's longest
	maxTenantHosts   = 100      // host names of one tenant
	maxHostLen       = 253      // a DNS name's longest
	maxSettingsBytes = 64 << 10 // a settings document, as JSON
	// tenantPageBytes bounds a ListTenants page (as ListFiles': under gRPC's default
	// 4 MiB message limit).
	tenantPageBytes = 2 << 20
)

// tenantStates converts states both ways.
var tenantStates = map[coffer.TenantState]adminv1.TenantState{
	coffer.TenantActive:    adminv1.TenantState_TENANT_STATE_ACTIVE,
	coffer.TenantSuspended: adminv1.TenantState_TENANT_STATE_SUSPENDED,
	coffer.TenantDeleting:  adminv1.TenantState_TENANT_STATE_DELETING,
}

// tenantID refuses an empty or oversized tenant id.
func tenantID(id string) (string, error) {
	switch {
	case id == "":
		return "", coffer.InvalidField("id", "a tenant id is required")
	case len(id) > maxTenantID:
		return "", coffer.InvalidField("id", fmt.Sprintf("a tenant id is at most %d characters", maxTenantID))
	}
	return id, nil
}

// newTenant converts a CreateTenantRequest.
func newTenant(r *adminv1.CreateTenantRequest) (tenant.Input, error) {
	id, err := tenantID(r.GetId())
	if err != nil {
		return tenant.Input{}, err
	}
	hosts, err := hostsArg(r.GetHosts())
	if err != nil {
		return tenant.Input{}, err
	}
	settings, err := settingsArg(r.GetSettings())
	if err != nil {
		return tenant.Input{}, err
	}
	quota, err := quotaArg(r.GetQuota())
	if err != nil {
		return tenant.Input{}, err
	}
	return tenant.Input{ID: id, Hosts: hosts, Settings: settings, Quota: quota}, nil
}

// tenantUpdate converts an UpdateTenantRequest's changes (the id is checked apart).
func tenantUpdate(r *adminv1.UpdateTenantRequest) (tenant.Change, error) {
	var u tenant.Change
	if r.Hosts != nil {
		hosts, err := hostsArg(r.Hosts.GetHosts())
		if err != nil {
			return u, err
		}
		u.Hosts = &hosts
	}
	if r.Settings != nil {
		settings, err := settingsArg(r.Settings)
		if err != nil {
			return u, err
		}
		u.Settings = &settings
	}
	if r.Quota != nil {
		quota, err := quotaArg(r.Quota)
		if err != nil {
			return u, err
		}
		u.Quota = &quota
	}
	return u, nil
}

// hostsArg bounds a tenant's host names.
func hostsArg(hosts []string) ([]string, error) {
	if len(hosts) > maxTenantHosts {
		return nil, coffer.InvalidField("hosts", fmt.Sprintf("a tenant has at most %d host names", maxTenantHosts))
	}
	for i, h := range hosts {
		if h == "" || len(h) > maxHostLen {
			return nil, coffer.InvalidField(fmt.Sprintf("hosts[%d]", i), fmt.Sprintf("a host name is 1 to %d characters", maxHostLen))
		}
	}
	return append([]string{}, hosts...), nil
}

// quotaArg converts a quota (nil: no bound); negative bounds are refused.
func quotaArg(q *adminv1.Quota) (coffer.Quota, error) {
	switch {
	case q.GetMaxBytes() < 0:
		return coffer.Quota{}, coffer.InvalidField("quota.maxBytes", "a quota is 0 (no bound) or more")
	case q.GetMaxFiles() < 0:
		return coffer.Quota{}, coffer.InvalidField("quota.maxFiles", "a quota is 0 (no bound) or more")
	}
	return coffer.Quota{MaxBytes: q.GetMaxBytes(), MaxFiles: q.GetMaxFiles()}, nil
}

// settingsArg converts settings (nil: all defaults) with their secrets in clear,
// ignoring the output-only fields; empty admin secrets, negative or non-finite
// limits, a JWT document that is not JSON and settings over maxSettingsBytes (as
// their protojson) are refused, with the field named from the request's root.
func settingsArg(s *adminv1.TenantSettings) (tenant.Settings, error) {
	c := &adminv1.TenantSettings{}
	if s != nil {
		c = proto.CloneOf(s)
	}
	c.AdminSecretsCount, c.PresignKeySet = 0, false
	if c.Storage != nil {
		c.Storage.SecretAccessKeySet = false
	}
	for i, sec := range c.AdminSecrets {
		if sec == "" {
			return tenant.Settings{}, coffer.InvalidField(fmt.Sprintf("settings.adminSecrets[%d]", i), "an admin secret must not be empty")
		}
	}
	if err := limitsArg(c.Limits); err != nil {
		return tenant.Settings{}, err
	}
	b, err := protojson.MarshalOptions{}.Marshal(c)
	if err != nil {
		return tenant.Settings{}, coffer.InvalidField("settings", "the settings cannot be encoded: "+err.Error())
	}
	if len(b) > maxSettingsBytes {
		return tenant.Settings{}, coffer.InvalidField("settings", fmt.Sprintf("the settings are at most %d KiB as JSON", maxSettingsBytes>>10))
	}
	return settingsOf(c)
}

// settingsOf converts checked settings to package tenant's.
func settingsOf(w *adminv1.TenantSettings) (tenant.Settings, error) {
	s := tenant.Settings{AdminSecrets: w.GetAdminSecrets(), PresignKey: w.GetPresignKey(), UnauthorizedRole: w.GetUnauthorizedRole()}
	if j := w.GetJwt(); j != "" {
		if !json.Valid([]byte(j)) {
			return s, coffer.InvalidField("settings.jwt", "settings.jwt: not a JSON document (the same as --jwt-secret)")
		}
		s.JWT = json.RawMessage(j)
	}
	if st := w.GetStorage(); st != nil {
		s.Storage = tenant.Storage{Kind: st.GetKind(), Endpoint: st.GetEndpoint(), Region: st.GetRegion(), Bucket: st.GetBucket(),
			Prefix: st.GetPrefix(), AccessKeyID: st.GetAccessKeyId(), SecretAccessKey: st.GetSecretAccessKey(), PathStyle: st.GetPathStyle()}
	}
	if l := w.GetLimits(); l != nil {
		s.Limits = tenant.Limits{RequestsPerSecond: l.GetRequestsPerSecond(), Burst: int(l.GetBurst()),
			UserRequestsPerSecond: l.GetUserRequestsPerSecond(), UserBurst: int(l.GetUserBurst()),
			BytesPerSecond: int64(l.GetBytesPerSecond()), ImageConcurrency: int(l.GetImageConcurrency())}
	}
	return s, nil
}

// limitsArg refuses negative or non-finite limits (protojson would write NaN and
// Infinity as strings, which a JSON number cannot hold).
func limitsArg(l *adminv1.TenantLimits) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"requestsPerSecond", l.GetRequestsPerSecond()}, {"burst", float64(l.GetBurst())},
		{"userRequestsPerSecond", l.GetUserRequestsPerSecond()}, {"userBurst", float64(l.GetUserBurst())},
		{"bytesPerSecond", l.GetBytesPerSecond()}, {"imageConcurrency", float64(l.GetImageConcurrency())}} {
		if !(f.v >= 0) || math.IsInf(f.v, 1) {
			return coffer.InvalidField("settings.limits."+f.name, "a limit is a finite number, 0 (no limit) or more")
		}
	}
	return nil
}

// tenantPB converts a tenant as answers show it.
func tenantPB(t *tenant.View) *adminv1.Tenant {
	return &adminv1.Tenant{Id: t.ID, Hosts: t.Hosts, Settings: settingsPB(t.Settings), State: tenantStates[t.State],
		Quota:      &adminv1.Quota{MaxBytes: t.Quota.MaxBytes, MaxFiles: t.Quota.MaxFiles},
		CreateTime: ts(t.CreatedAt), UpdateTime: ts(t.UpdatedAt)}
}

// settingsPB converts redacted settings: the output-only fields say which secrets
// are set.
func settingsPB(r tenant.Redacted) *adminv1.TenantSettings {
	l := r.Limits
	return &adminv1.TenantSettings{AdminSecretsCount: int32(r.AdminSecrets.Count), PresignKeySet: r.PresignKey.Set,
		UnauthorizedRole: r.UnauthorizedRole, Jwt: string(r.JWT),
		Storage: &adminv1.TenantStorage{Kind: r.Storage.Kind, Endpoint: r.Storage.Endpoint, Region: r.Storage.Region,
			Bucket: r.Storage.Bucket, Prefix: r.Storage.Prefix, AccessKeyId: r.Storage.AccessKeyID,
			SecretAccessKeySet: r.Storage.SecretAccessKey.Set, PathStyle: r.Storage.PathStyle},
		Limits: &adminv1.TenantLimits{RequestsPerSecond: l.RequestsPerSecond, Burst: int32(l.Burst),
			UserRequestsPerSecond: l.UserRequestsPerSecond, UserBurst: int32(l.UserBurst),
			BytesPerSecond: float64(l.BytesPerSecond), ImageConcurrency: int32(l.ImageConcurrency)}}
}

// tenantPageArgs converts ListTenants' paging: the page size (0: 100) and the id
// the page starts after ("" for the first page).
func tenantPageArgs(r *adminv1.ListTenantsRequest) (size int, after string, err error) {
	if n := r.GetPageSize(); n < 0 || n > 1000 {
		return 0, "", coffer.InvalidField("pageSize", "the page size is 1 to 1000 (0: 100)")
	}
	if tok := r.GetPageToken(); tok != "" {
		b, derr := base64.RawURLEncoding.DecodeString(tok)
		if derr != nil || len(b) == 0 || len(b) > maxTenantID {
			return 0, "", coffer.InvalidField("pageToken", "invalid page token (use a next_page_token as it came)")
		}
		after = string(b)
	}
	return limitArg(r.GetPageSize()), after, nil
}

// tenantPage is the page of all (ordered by id) after id after: at most size
// tenants and tenantPageBytes, with the next page's token if more follow.
func tenantPage(all []*tenant.View, size int, after string) *adminv1.ListTenantsResponse {
	out, bytes := &adminv1.ListTenantsResponse{}, 0
	for _, t := range all {
		if t.ID <= after {
			continue
		}
		pb := tenantPB(t)
		bytes += proto.Size(pb)
		if len(out.Tenants) == size || len(out.Tenants) > 0 && bytes > tenantPageBytes {
			out.NextPageToken = base64.RawURLEncoding.EncodeToString([]byte(out.Tenants[len(out.Tenants)-1].Id))
			break
		}
		out.Tenants = append(out.Tenants, pb)
	}
	return out
}
