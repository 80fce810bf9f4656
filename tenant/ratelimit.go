package tenant

import (
	"time"
)

// RateLimiter applies one tenant's request limits: a bucket for the whole tenant
// and one per user. Safe for concurrent use; a check costs an atomic
// compare-and-swap per bucket and, with users, a read-locked map lookup in one of
// the user table's shards. Build one per tenant (NewRateLimiter) when its settings
// change; a nil *RateLimiter allows everything.
type RateLimiter struct {
	tenant    *cell
	tenantArg rate
	users     *userTable // nil: no per-user limit
}

// UserTableConfig bounds the memory of the per-user buckets of one tenant.
type UserTableConfig struct {
	// MaxUsers is how many users' buckets are kept at most (~100 bytes each: a
	// user key longer than 64 bytes is kept as its 64-bit hash). At
	// the cap, a new user first makes every full bucket of its shard be forgotten
	// (lossless: a full bucket is what a new user gets), else the bucket closest
	// to full: that user starts again from a full bucket, so it may get up to one
	// burst more than its rate. Nobody is refused because of the cap.
	MaxUsers int
	// Shards spread the users over this many locks (rounded up to a power of 2).
	Shards int
}

// DefaultUserTableConfig: 1,024 users per tenant over 16 shards (at most ~100 KB
// per tenant with per-user limits).
func DefaultUserTableConfig() UserTableConfig {
	return UserTableConfig{MaxUsers: 1024, Shards: 16}
}

// NewRateLimiter returns the limiter of l (validated settings); nil if l limits
// no requests.
func NewRateLimiter(l Limits, users UserTableConfig) *RateLimiter {
	if l.RequestsPerSecond <= 0 && l.UserRequestsPerSecond <= 0 {
		return nil
	}
	r := &RateLimiter{}
	if l.RequestsPerSecond > 0 {
		r.tenant, r.tenantArg = &cell{}, newRate(l.RequestsPerSecond, l.Burst)
	}
	if l.UserRequestsPerSecond > 0 {
		r.users = newUserTable(newRate(l.UserRequestsPerSecond, l.UserBurst), users)
	}
	return r
}

// Allow takes one request of user (an opaque key: a user id, or what the caller
// chooses for anonymous requests; "" skips the per-user bucket) at now. The user's
// bucket is checked first, so requests a user is refused do not spend the
// tenant's. The Decision is the refusing bucket's, else the one with fewer
// requests remaining.
func (r *RateLimiter) Allow(now time.Time, user string) Decision {
	if r == nil {
		return Decision{OK: true}
	}
	ns := now.UnixNano()
	d := Decision{OK: true, Remaining: -1}
	if r.users != nil && user != "" {
		if d = r.users.get(user, ns).allow(r.users.rate, ns); !d.OK {
			return d
		}
	}
	if r.tenant != nil {
		if t := r.tenant.allow(r.tenantArg, ns); !t.OK || d.Remaining < 0 || t.Remaining < d.Remaining {
			return t
		}
	}
	return d
}
