package access

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

var stringOps = map[string]bool{"_like": true, "_ilike": true, "_nlike": true, "_nilike": true}
var cmpOps = map[string]bool{"_eq": true, "_neq": true, "_gt": true, "_gte": true, "_lt": true, "_lte": true}

// CompileExpr compiles a boolean expression in Hasura's operator language:
// {"field": {"_op": value}}, {"_and": [...]}, {"_or": [...]}, {"_not": {...}}; several
// keys in one object are ANDed; {} is true. at names the expression in errors.
func CompileExpr(v any, at string) (coffer.Expr, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(at, "must be an object like {\"uploaded_by_user_id\": {\"_eq\": \"X-Hasura-User-Id\"}}")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic errors and trees
	and := coffer.And{}
	for _, k := range keys {
		x, err := compileKey(k, m[k], at+"."+k)
		if err != nil {
			return nil, err
		}
		and = append(and, x)
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return and, nil
}

func compileKey(k string, v any, at string) (coffer.Expr, error) {
	switch k {
	case "_and", "_or":
		list, ok := v.([]any)
		if !ok {
			return nil, invalid(at, "must be a list of expressions")
		}
		xs := make([]coffer.Expr, len(list))
		for i, item := range list {
			x, err := CompileExpr(item, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			xs[i] = x
		}
		if k == "_and" {
			return coffer.And(xs), nil
		}
		return coffer.Or(xs), nil
	case "_not":
		x, err := CompileExpr(v, at)
		if err != nil {
			return nil, err
		}
		return coffer.Not{X: x}, nil
	}
	kind, ok := coffer.FieldKinds[k]
	if !ok {
		return nil, invalid(at, "unknown field or operator (fields: %s; operators: _and, _or, _not)", fieldList())
	}
	return compileField(k, kind, v, at)
}

func fieldList() string {
	fs := make([]string, 0, len(coffer.FieldKinds))
	for f := range coffer.FieldKinds {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return strings.Join(fs, ", ")
}

func compileField(field string, kind coffer.FieldKind, v any, at string) (coffer.Expr, error) {
	ops, ok := v.(map[string]any)
	if !ok || len(ops) == 0 {
		return nil, invalid(at, "must be an object of operators like {\"_eq\": ...}")
	}
	names := make([]string, 0, len(ops))
	for op := range ops {
		names = append(names, op)
	}
	sort.Strings(names)
	and := coffer.And{}
	for _, op := range names {
		c, err := compileCmp(field, kind, op, ops[op], at+"."+op)
		if err != nil {
			return nil, err
		}
		and = append(and, c)
	}
	if len(and) == 1 {
		return and[0], nil
	}
	return and, nil
}

func compileCmp(field string, kind coffer.FieldKind, op string, v any, at string) (*coffer.Cmp, error) {
	c := &coffer.Cmp{Field: field, Op: op}
	switch {
	case op == "_is_null":
		b, ok := v.(bool)
		if !ok {
			return nil, invalid(at, "must be true or false")
		}
		c.Arg.Lit.Bool = b
	case op == "_in" || op == "_nin":
		list, ok := v.([]any)
		if !ok {
			return nil, invalid(at, "must be a list")
		}
		for i, item := range list {
			o, err := compileOperand(kind, item, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return nil, err
			}
			c.List = append(c.List, o)
		}
	case stringOps[op]:
		if kind != coffer.KindString {
			return nil, invalid(at, "works on text fields only")
		}
		fallthrough
	case cmpOps[op]:
		o, err := compileOperand(kind, v, at)
		if err != nil {
			return nil, err
		}
		c.Arg = o
	default:
		return nil, invalid(at, "unknown operator (use _eq _neq _gt _gte _lt _lte _in _nin _like _ilike _nlike _nilike _is_null)")
	}
	return c, nil
}

// compileOperand turns a rule value into a literal of the field's kind or a session
// variable reference.
func compileOperand(kind coffer.FieldKind, v any, at string) (coffer.Operand, error) {
	if s, ok := v.(string); ok && IsSessionVar(s) {
		return coffer.Operand{Var: strings.ToLower(s)}, nil
	}
	var val coffer.Value
	ok := false
	switch kind {
	case coffer.KindString:
		val.Str, ok = v.(string)
	case coffer.KindInt:
		val.Int, ok = v.(int64)
	case coffer.KindBool:
		val.Bool, ok = v.(bool)
	case coffer.KindTime:
		val, ok = timeValue(v)
	}
	if !ok {
		return coffer.Operand{}, invalid(at, "must be %s or a session variable (X-Hasura-...)", kindName(kind))
	}
	return coffer.Operand{Lit: val}, nil
}

func timeValue(v any) (coffer.Value, bool) {
	switch t := v.(type) {
	case string:
		return coffer.ParseValue(coffer.KindTime, t)
	case time.Time: // YAML decodes unquoted timestamps
		return coffer.Value{Time: t.UTC().Truncate(time.Microsecond)}, true
	}
	return coffer.Value{}, false
}

func kindName(k coffer.FieldKind) string {
	return [...]string{"a string", "an integer", "true or false", "an RFC 3339 timestamp"}[k]
}

// IsSessionVar reports whether a rule string names a session variable.
func IsSessionVar(s string) bool {
	n := len(coffer.SessionVarPrefix)
	return len(s) > n && strings.EqualFold(s[:n], coffer.SessionVarPrefix)
}
