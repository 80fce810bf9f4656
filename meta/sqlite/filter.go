package sqlite

import (
	"database/sql/driver"
	"sync"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
	msqlite "modernc.org/sqlite"
)

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

// dialect renders filters for SQLite, appending arguments to *args.
func dialect(args *[]any) meta.Dialect {
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
