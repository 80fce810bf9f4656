package sqlcore

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer/meta"
)

// Dialect is what differs between SQL engines. Every function field must be set;
// ForUpdate, KeyShare, MigrateLock and HostLock may be "".
type Dialect struct {
	// Name is the engine's name, in error messages ("migrate sqlite").
	Name string
	// Time returns the argument stored for a timestamp (UTC, microseconds).
	Time func(t time.Time) any
	// TimeType is the SQL type of a timestamp column, for CAST.
	TimeType string
	// List returns the argument stored for a list of strings (never nil).
	List func(l []string) any
	// ListDest returns a scan destination that reads a list of strings into *l.
	ListDest func(l *[]string) any
	// JSONArg is the placeholder for a JSON column, e.g. "?" or "?::text::json".
	JSONArg string
	// JSONText renders a JSON column read back as text, e.g. "metadata::text".
	JSONText func(col string) string
	// UUIDArg is the placeholder for a value compared with a UUID column.
	UUIDArg string
	// ForUpdate locks rows read in a transaction that then writes them ("" when
	// the engine serialises writers anyway); KeyShare keeps referenced rows alive.
	ForUpdate, KeyShare string
	// Contains renders "haystack contains needle" (both SQL expressions).
	Contains func(haystack, needle string) string
	// HasPrefix renders "col starts with prefix", appending its arguments to *args.
	HasPrefix func(col string, prefix string, args *[]any) string
	// WritableCTE is set when INSERT and DELETE may run inside WITH (PostgreSQL): with
	// a DB that is a RowWriter, CreateFiles then commits a file in one statement.
	WritableCTE bool
	// True and False are the literals a boolean column is compared with.
	True, False string
	// Filter renders filters, appending arguments to *args (placeholders "?").
	Filter func(args *[]any) meta.Dialect
	// Unique, ForeignKey and Unstorable classify driver errors: a unique or primary
	// key violation, a foreign key violation, text the engine cannot store.
	Unique, ForeignKey, Unstorable func(err error) bool
	// Quota returns the message of a change the usage trigger refused because it
	// would take a tenant past its quota (see the tenants migration), "" for any
	// other error.
	Quota func(err error) string

	// Migrations holds the engine's migrations/*.sql; MigrationsTable creates the
	// schema_migrations table if missing; MigrateLock, when not "", runs first in the
	// migration transaction to keep concurrent starts apart.
	Migrations      fs.FS
	MigrationsTable string
	MigrateLock     string
	// HostLock, when not "", runs first in every transaction that gives host names
	// to a tenant or a site, so that two of them cannot each check the other's table
	// and both take one host (an engine that serialises writers needs none).
	HostLock string

	// Claim and Redeliver are the webhook queries whose locking is engine-specific;
	// see meta.Outbox for their contract. They may return unmapped errors. Claim works
	// across tenants. Redeliver resets delivery id of tenant's subscription subID
	// unless its lease runs at now, and reports whether it does; an error wrapping
	// sql.ErrNoRows if there is no such delivery.
	Claim     func(ctx context.Context, db DB, now, leaseUntil time.Time, limit int) ([]*meta.Claim, error)
	Redeliver func(ctx context.Context, db DB, tenant, subID string, id int64, now time.Time) (leased bool, err error)
}

// Rebind rewrites ? placeholders as $1, $2... for engines that number them. A ? inside
// a quoted string or identifier is left alone.
func Rebind(q string) string {
	if !strings.Contains(q, "?") {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n, quote := 0, byte(0)
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '?':
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Time is a scan destination for a timestamp stored either as Unix microseconds
// (int64) or as a time; it stores the UTC time in *T.
type Time struct{ T *time.Time }

// Scan implements sql.Scanner.
func (t Time) Scan(v any) error {
	switch v := v.(type) {
	case int64:
		*t.T = time.UnixMicro(v).UTC()
	case time.Time:
		*t.T = v.UTC()
	default:
		return fmt.Errorf("sqlcore: cannot scan %T into a time", v)
	}
	return nil
}

// Micros returns t as Unix microseconds, for engines that store timestamps as integers.
func Micros(t time.Time) any { return t.UnixMicro() }
