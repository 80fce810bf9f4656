package sqlite

import (
	"database/sql/driver"
	"embed"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	msqlite "modernc.org/sqlite"
)

//go:embed migrations/*.sql
var migrations embed.FS

// newDialect describes SQLite to the shared core: timestamps are Unix microseconds,
// string lists and JSON are text, booleans 0/1, and there are no row locks (one writer
// at a time).
func newDialect() *sqlcore.Dialect {
	return &sqlcore.Dialect{
		Name:       "sqlite",
		Time:       sqlcore.Micros,
		TimeType:   "INTEGER",
		List:       func(l []string) any { b, _ := json.Marshal(l); return string(b) },
		ListDest:   func(l *[]string) any { return jsonList{l} },
		JSONArg:    "?",
		JSONText:   func(col string) string { return col },
		UUIDArg:    "?",
		Contains:   func(h, n string) string { return "instr(" + h + ", " + n + ") > 0" },
		HasPrefix:  hasPrefix,
		True:       "1",
		False:      "0",
		Filter:     filterDialect,
		Unique:     isUnique,
		ForeignKey: isForeignKey,
		Unstorable: func(error) bool { return false },
		Quota:      quotaMessage,
		Migrations: migrations,
		MigrationsTable: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`,
		Claim:     claim,
		Redeliver: redeliver,
	}
}

// hasPrefix compares bytes: SQLite's LIKE and GLOB would need escaping and fold case.
func hasPrefix(col, prefix string, args *[]any) string {
	*args = append(*args, prefix, prefix)
	return "substr(" + col + ", 1, length(?)) = ?"
}

// jsonList scans a JSON array of strings stored as text.
type jsonList struct{ l *[]string }

// Scan implements sql.Scanner.
func (j jsonList) Scan(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("sqlite: cannot scan %T into a string list", v)
	}
	return json.Unmarshal([]byte(s), j.l)
}

// registerFuncs adds coffer_like(value, pattern, fold) to the driver: LIKE with exactly
// coffer.Like's semantics (SQLite's own LIKE folds ASCII case by default).
var registerFuncs = sync.OnceValue(func() error {
	return msqlite.RegisterDeterministicScalarFunction("coffer_like", 3,
		func(_ *msqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			s, _ := args[0].(string)
			p, _ := args[1].(string)
			fold, _ := args[2].(int64)
			if coffer.Like(s, p, fold != 0) {
				return int64(1), nil
			}
			return int64(0), nil
		})
})

// filterDialect renders filters for SQLite, appending arguments to *args.
func filterDialect(args *[]any) meta.Dialect {
	return meta.Dialect{
		Arg:    func(v any) string { *args = append(*args, v); return "?" },
		Column: func(field string) string { return field },
		Bool: func(b bool) any {
			if b {
				return int64(1)
			}
			return int64(0)
		},
		Time: func(t time.Time) any { return t.UnixMicro() },
		Like: func(col, pattern string, fold bool) string {
			f := "0"
			if fold {
				f = "1"
			}
			return "(coffer_like(" + col + ", " + pattern + ", " + f + ") = 1)"
		},
	}
}
