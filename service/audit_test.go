package service_test

import (
	"context"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
	"github.com/coffer/coffer/site/audit"
)

// fakeAuditLog is a service.AuditLog that records the filters it is asked.
type fakeAuditLog struct{ asked []audit.Filter }

func (l *fakeAuditLog) QueryAudit(_ context.Context, f audit.Filter) ([]audit.Record, error) {
	l.asked = append(l.asked, f)
	return []audit.Record{{Tenant: f.Tenant}}, nil
}

// TestAuditScope: the platform admin reads any tenant's records, a tenant's admin
// its own only (named or not); anyone else is refused before the log is read.
func TestAuditScope(t *testing.T) {
	admin, user := &coffer.Principal{Admin: true, Role: "admin"}, &coffer.Principal{Role: "user", UserID: "u1"}
	for _, tc := range []struct {
		name   string
		c      service.AuditCaller
		named  string
		code   string // "": allowed
		tenant string // the tenant read
	}{
		{"platform, a tenant", service.AuditCaller{Platform: true, Tenant: ""}, "beta", "", "beta"},
		{"platform, every tenant", service.AuditCaller{Platform: true}, "", "", ""},
		{"tenant admin", service.AuditCaller{Principal: admin, Tenant: "acme"}, "", "", "acme"},
		{"tenant admin naming itself", service.AuditCaller{Principal: admin, Tenant: "acme"}, "acme", "", "acme"},
		{"tenant admin naming another", service.AuditCaller{Principal: admin, Tenant: "acme"}, "beta", coffer.EFORBIDDEN, ""},
		{"default admin naming a tenant", service.AuditCaller{Principal: admin}, "beta", coffer.EFORBIDDEN, ""},
		{"user", service.AuditCaller{Principal: user, Tenant: "acme"}, "", coffer.EFORBIDDEN, ""},
		{"no credentials", service.AuditCaller{Tenant: "acme"}, "", coffer.EUNAUTHORIZED, ""},
		{"anonymous", service.AuditCaller{Principal: &coffer.Principal{Anonymous: true}}, "", coffer.EUNAUTHORIZED, ""},
	} {
		log := &fakeAuditLog{}
		recs, err := service.Audit{Log: log}.Query(context.Background(), tc.c, audit.Filter{Tenant: tc.named})
		if tc.code != "" {
			wantCode(t, tc.name, err, tc.code)
			if len(log.asked) != 0 {
				t.Errorf("%s: the refused query reached the log", tc.name)
			}
			continue
		}
		if err != nil || len(recs) != 1 || log.asked[0].Tenant != tc.tenant {
			t.Errorf("%s: %v, %v; want tenant %q read", tc.name, log.asked, err, tc.tenant)
		}
	}
}

// TestAuditFilterBounds: the filter reaches the log with its cache outcome
// upper-cased and limit 0 as the default; bad filters are EINVALID naming their
// field, and a server without a log EPRECONDITION, none reaching a log.
func TestAuditFilterBounds(t *testing.T) {
	ctx, platform := context.Background(), service.AuditCaller{Platform: true}
	log := &fakeAuditLog{}
	if _, err := (service.Audit{Log: log}).Query(ctx, platform, audit.Filter{Cache: "hit", Status: 200}); err != nil {
		t.Fatal(err)
	}
	if f := log.asked[0]; f.Cache != "HIT" || f.Limit != service.DefaultAuditLimit || f.Status != 200 {
		t.Errorf("filter passed %+v", f)
	}
	now := time.Now()
	for _, tc := range []struct {
		field string
		f     audit.Filter
	}{
		{"limit", audit.Filter{Limit: service.MaxAuditLimit + 1}},
		{"limit", audit.Filter{Limit: -1}},
		{"status", audit.Filter{Status: 99}},
		{"status", audit.Filter{Status: 600}},
		{"cache", audit.Filter{Cache: "WARM"}},
		{"since", audit.Filter{Since: now, Until: now.Add(-time.Second)}},
		{"path", audit.Filter{Path: string(make([]byte, 4097))}},
		{"site", audit.Filter{Site: string(make([]byte, 4097))}},
	} {
		_, err := service.Audit{Log: log}.Query(ctx, platform, tc.f)
		if coffer.ErrorCode(err) != coffer.EINVALID || coffer.ErrorField(err) != tc.field {
			t.Errorf("%+v: %v, want EINVALID naming %q", tc.f, err, tc.field)
		}
	}
	if len(log.asked) != 1 {
		t.Errorf("refused queries reached the log (%d)", len(log.asked)-1)
	}
	_, err := service.Audit{}.Query(ctx, platform, audit.Filter{})
	wantCode(t, "no log", err, coffer.EPRECONDITION)
}
