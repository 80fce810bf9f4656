package postgres

import (
	"embed"
	"errors"
	"strconv"
	"time"

	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrateLock is the advisory lock key held while migrating ("coffer" in ASCII).
const migrateLock int64 = 0x636f66666572

// hostLock is the advisory lock key held by a transaction that gives host names to
// a tenant or a site ("cofhost" in ASCII): hosts are unique across two tables.
const hostLock int64 = 0x636f66686f7374

// PostgreSQL error codes mapped to domain errors.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
	// text PostgreSQL cannot store: character_not_in_repertoire (NUL, invalid UTF-8),
	// untranslatable_character
	notInRepertoire = "22021"
	untranslatable  = "22P05"
	// the usage trigger's refusal of a change past a tenant's quota (0009_tenants.sql)
	quotaExceeded = "CQ001"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// newDialect describes PostgreSQL to the shared core.
func newDialect() *sqlcore.Dialect {
	return &sqlcore.Dialect{
		Name:        "postgres",
		Time:        func(t time.Time) any { return t },
		TimeType:    "timestamptz",
		List:        func(l []string) any { return l },
		ListDest:    func(l *[]string) any { return l },
		JSONArg:     "?::text::json",
		JSONText:    func(col string) string { return col + "::text" },
		UUIDArg:     "?::uuid",
		WritableCTE: true,
		ForUpdate:   " FOR UPDATE",
		KeyShare:    " FOR KEY SHARE",
		Contains:    func(h, n string) string { return "strpos(" + h + ", " + n + ") > 0" },
		HasPrefix:   hasPrefix,
		True:        "TRUE",
		False:       "FALSE",
		Filter:      filterDialect,
		Unique:      func(err error) bool { return pgCode(err) == uniqueViolation },
		ForeignKey:  func(err error) bool { return pgCode(err) == foreignKeyViolation },
		Unstorable:  func(err error) bool { c := pgCode(err); return c == notInRepertoire || c == untranslatable },
		Quota:       quotaMessage,
		Migrations:  migrations,
		MigrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`,
		MigrateLock: `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(migrateLock, 10) + `)`,
		HostLock:    `SELECT pg_advisory_xact_lock(` + strconv.FormatInt(hostLock, 10) + `)`,
		Claim:       claim,
		Redeliver:   redeliver,
	}
}

// quotaMessage returns the usage trigger's message if err is its quota refusal.
func quotaMessage(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == quotaExceeded {
		return pe.Message
	}
	return ""
}

// hasPrefix uses starts_with: LIKE would need the prefix escaped.
func hasPrefix(col, prefix string, args *[]any) string {
	*args = append(*args, prefix)
	return "starts_with(" + col + ", ?)"
}
