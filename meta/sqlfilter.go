package meta

import (
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Dialect says how a SQL store spells a filter expression. FilterSQL's output must
// select exactly the rows coffer.Expr.Match accepts; metatest checks both stores.
type Dialect struct {
	// Arg appends a query argument and returns its placeholder.
	Arg func(v any) string
	// Column returns the SQL for a field compared as its kind (text columns compared
	// byte-wise, ids as canonical text).
	Column func(field string) string
	// Bool and Time convert literals to the store's column representation.
	Bool func(bool) any
	Time func(time.Time) any
	// Like returns SQL for "col LIKE pattern" with '\' escapes, folding ASCII case
	// when fold is set, with exactly coffer.Like's semantics.
	Like func(col, pattern string, fold bool) string
}

const (
	sqlTrue  = "(1=1)"
	sqlFalse = "(1=0)"
)

// FilterSQL renders e as a SQL boolean expression under vars.
func FilterSQL(e coffer.Expr, vars map[string]string, d Dialect) string {
	switch x := e.(type) {
	case coffer.And:
		return join(x, vars, d, " AND ", sqlTrue)
	case coffer.Or:
		return join(x, vars, d, " OR ", sqlFalse)
	case coffer.Not:
		return "(NOT " + FilterSQL(x.X, vars, d) + ")"
	case *coffer.Cmp:
		return cmpSQL(x, vars, d)
	}
	return sqlFalse // unknown node: deny
}

func join(xs []coffer.Expr, vars map[string]string, d Dialect, sep, empty string) string {
	if len(xs) == 0 {
		return empty
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = FilterSQL(x, vars, d)
	}
	return "(" + strings.Join(parts, sep) + ")"
}

func cmpSQL(c *coffer.Cmp, vars map[string]string, d Dialect) string {
	kind, ok := coffer.FieldKinds[c.Field]
	if !ok {
		return sqlFalse
	}
	col := d.Column(c.Field)
	switch c.Op {
	case "_is_null":
		if kind != coffer.KindString {
			return boolSQL(!c.Arg.Lit.Bool)
		}
		if c.Arg.Lit.Bool {
			return "(" + col + " = '')"
		}
		return "(" + col + " <> '')"
	case "_in", "_nin":
		return inSQL(c, kind, col, vars, d)
	}
	v, ok := c.Arg.Resolve(kind, vars)
	if !ok {
		return sqlFalse
	}
	switch c.Op {
	case "_like", "_ilike":
		return d.Like(col, d.Arg(likePattern(v.Str)), c.Op == "_ilike")
	case "_nlike", "_nilike":
		return "(NOT " + d.Like(col, d.Arg(likePattern(v.Str)), c.Op == "_nilike") + ")"
	}
	op, ok := map[string]string{"_eq": "=", "_neq": "<>", "_gt": ">", "_gte": ">=", "_lt": "<", "_lte": "<="}[c.Op]
	if !ok {
		return sqlFalse
	}
	return "(" + col + " " + op + " " + d.Arg(literal(kind, v, d)) + ")"
}

func inSQL(c *coffer.Cmp, kind coffer.FieldKind, col string, vars map[string]string, d Dialect) string {
	var phs []string
	for _, o := range c.List {
		if v, ok := o.Resolve(kind, vars); ok {
			phs = append(phs, d.Arg(literal(kind, v, d)))
		}
	}
	if len(phs) == 0 {
		return boolSQL(c.Op == "_nin")
	}
	not := ""
	if c.Op == "_nin" {
		not = "NOT "
	}
	return "(" + col + " " + not + "IN (" + strings.Join(phs, ", ") + "))"
}

func literal(kind coffer.FieldKind, v coffer.Value, d Dialect) any {
	switch kind {
	case coffer.KindInt:
		return v.Int
	case coffer.KindBool:
		return d.Bool(v.Bool)
	case coffer.KindTime:
		return d.Time(v.Time)
	}
	return v.Str
}

func boolSQL(b bool) string {
	if b {
		return sqlTrue
	}
	return sqlFalse
}

// likePattern escapes a trailing lone '\': coffer.Like reads it as a literal
// backslash, where SQL would refuse the pattern.
func likePattern(p string) string {
	n := 0
	for i := len(p) - 1; i >= 0 && p[i] == '\\'; i-- {
		n++
	}
	if n%2 == 1 {
		return p + "\\"
	}
	return p
}
