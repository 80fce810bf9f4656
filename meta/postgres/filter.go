package postgres

import (
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

const (
	upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	lower = "abcdefghijklmnopqrstuvwxyz"
)

// filterDialect renders filters for PostgreSQL, appending arguments to *args. Text is
// compared under COLLATE "C" (byte order, like Go) and case folding is ASCII-only
// translate(), so results equal coffer.Expr.Match exactly.
func filterDialect(args *[]any) meta.Dialect {
	return meta.Dialect{
		Arg: func(v any) string { *args = append(*args, v); return "?" }, // numbered by sqlcore.Rebind
		Column: func(field string) string {
			switch {
			case field == coffer.FieldID:
				return `(id::text COLLATE "C")`
			case coffer.FieldKinds[field] == coffer.KindString:
				return `(` + field + ` COLLATE "C")`
			}
			return field
		},
		Bool: func(b bool) any { return b },
		Time: func(t time.Time) any { return t },
		Like: func(col, pattern string, fold bool) string {
			if fold {
				col = "translate(" + col + ", '" + upper + "', '" + lower + "')"
				pattern = "translate(" + pattern + "::text, '" + upper + "', '" + lower + "')"
			}
			return "(" + col + " LIKE " + pattern + ` ESCAPE '\')`
		},
	}
}
