package tenant

import (
	"time"

	"github.com/coffer/coffer"
)

// The tenant admin use cases' own types: what the platform admin writes and what
// answers show, typed, whatever face carries them (the management API converts its
// messages to and from these; no face passes wire bytes to the use cases).

// Input is a new tenant as the platform admin writes it: its settings with their
// secrets in clear (Prepare hashes and seals them before they are stored).
type Input struct {
	ID       string
	Hosts    []string
	Settings Settings
	Quota    coffer.Quota
}

// Change lists what an update of a tenant changes; nil means unchanged. Settings,
// when given, replace the stored ones except for the write-only secrets they leave
// empty, which keep their stored values.
type Change struct {
	Hosts    *[]string
	Settings *Settings
	Quota    *coffer.Quota
}

// View is a tenant as answers show it: its settings redacted.
type View struct {
	ID        string
	Hosts     []string
	Settings  Redacted
	State     coffer.TenantState
	Quota     coffer.Quota
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ViewOf returns the stored tenant t as answers show it; EINTERNAL if its stored
// settings do not parse.
func ViewOf(t *coffer.Tenant) (*View, error) {
	s, err := Parse(t.Settings)
	if err != nil {
		return nil, coffer.Internal(err, "tenant "+t.ID+": stored settings")
	}
	return &View{ID: t.ID, Hosts: t.Hosts, Settings: s.Redacted(), State: t.State, Quota: t.Quota,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}, nil
}
