package tenancy

import (
	"slices"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// TestGoneSince: a reload tells which tenants were deleted since the last one: gone,
// newly being deleted, or held by a tenant created since; not those changed otherwise.
func TestGoneSince(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	row := func(state coffer.TenantState, created time.Time) *coffer.Tenant {
		return &coffer.Tenant{State: state, CreatedAt: created, UpdatedAt: created.Add(time.Hour)}
	}
	prev := map[string]*coffer.Tenant{"gone": row(coffer.TenantActive, t0), "deleting": row(coffer.TenantActive, t0),
		"reborn": row(coffer.TenantDeleting, t0), "suspended": row(coffer.TenantActive, t0), "still": row(coffer.TenantDeleting, t0)}
	rows := map[string]*coffer.Tenant{"deleting": row(coffer.TenantDeleting, t0), "reborn": row(coffer.TenantActive, t0.Add(time.Microsecond)),
		"suspended": row(coffer.TenantSuspended, t0), "still": row(coffer.TenantDeleting, t0), "new": row(coffer.TenantActive, t0)}
	got := goneSince(prev, rows)
	slices.Sort(got)
	if want := []string{"deleting", "gone", "reborn"}; !slices.Equal(got, want) {
		t.Errorf("goneSince = %v, want %v", got, want)
	}
}
