package access

import (
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Explain says why f does not satisfy e under the session vars, for a person:
// the first comparison that fails, with the file's value and the operand's
// (`uploaded_by_user_id is "bob", not _eq x-hasura-user-id ("alice")`); "" when e
// matches (e.Match(f, vars) is true). It evaluates with Match, so the two agree.
func Explain(e coffer.Expr, f *coffer.File, vars map[string]string) string {
	if e.Match(f, vars) {
		return ""
	}
	switch x := e.(type) {
	case coffer.And:
		for _, c := range x {
			if why := Explain(c, f, vars); why != "" {
				return why
			}
		}
	case coffer.Or:
		whys := make([]string, len(x))
		for i, c := range x {
			whys[i] = Explain(c, f, vars)
		}
		return "none of _or's conditions holds (" + strings.Join(whys, "; ") + ")"
	case coffer.Not:
		return "the condition under _not holds"
	case *coffer.Cmp:
		return explainCmp(x, f, vars)
	}
	return "the condition does not hold"
}

// explainCmp says why the comparison c fails for f.
func explainCmp(c *coffer.Cmp, f *coffer.File, vars map[string]string) string {
	k := coffer.FieldKinds[c.Field]
	have := c.Field + " is " + formatValue(k, coffer.FieldValue(f, c.Field))
	switch c.Op {
	case "_is_null":
		return have + ", not _is_null " + strconv.FormatBool(c.Arg.Lit.Bool)
	case "_in", "_nin":
		ops := make([]string, len(c.List))
		for i, o := range c.List {
			ops[i] = formatOperand(k, o, vars)
		}
		return have + ", not " + c.Op + " [" + strings.Join(ops, ", ") + "]"
	}
	if _, ok := c.Arg.Resolve(k, vars); !ok {
		if _, set := vars[c.Arg.Var]; !set {
			return c.Field + " is compared with " + c.Arg.Var + ", which the session does not have"
		}
		return c.Field + " is compared with " + c.Arg.Var + " (" + strconv.Quote(vars[c.Arg.Var]) + "), which is not " + kindName(k)
	}
	return have + ", not " + c.Op + " " + formatOperand(k, c.Arg, vars)
}

// formatOperand writes a literal as formatValue does, a session variable as its
// name and value.
func formatOperand(k coffer.FieldKind, o coffer.Operand, vars map[string]string) string {
	if o.Var == "" {
		return formatValue(k, o.Lit)
	}
	v, ok := o.Resolve(k, vars)
	if !ok {
		return o.Var + " (not in the session)"
	}
	return o.Var + " (" + formatValue(k, v) + ")"
}

// formatValue writes v of kind k: strings quoted, times in RFC 3339.
func formatValue(k coffer.FieldKind, v coffer.Value) string {
	switch k {
	case coffer.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case coffer.KindBool:
		return strconv.FormatBool(v.Bool)
	case coffer.KindTime:
		return v.Time.Format(time.RFC3339Nano)
	}
	return strconv.Quote(v.Str)
}
