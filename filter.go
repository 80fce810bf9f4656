package coffer

import (
	"strconv"
	"strings"
	"time"
)

// Expr is a compiled boolean expression over a file's fields, with session variables
// left as references: the access package builds it from rules, Match evaluates it in
// memory, and metadata stores translate it to SQL so lists are filtered in the query.
// Both must agree; the conformance suites check that they do.
type Expr interface {
	// Match reports whether f satisfies the expression under the session vars
	// (lower-case names). A missing variable makes its comparison false.
	Match(f *File, vars map[string]string) bool
}

// Field names an expression can compare.
const (
	FieldID         = "id"
	FieldBucketID   = "bucket_id"
	FieldName       = "name"
	FieldSize       = "size"
	FieldMimeType   = "mime_type"
	FieldETag       = "etag"
	FieldIsUploaded = "is_uploaded"
	FieldUploadedBy = "uploaded_by_user_id"
	FieldCreatedAt  = "created_at"
	FieldUpdatedAt  = "updated_at"
)

// FieldKind is the type of a field.
type FieldKind int

// Field kinds.
const (
	KindString FieldKind = iota
	KindInt
	KindBool
	KindTime
)

// FieldKinds lists every field an expression may use.
var FieldKinds = map[string]FieldKind{
	FieldID: KindString, FieldBucketID: KindString, FieldName: KindString, FieldSize: KindInt,
	FieldMimeType: KindString, FieldETag: KindString, FieldIsUploaded: KindBool,
	FieldUploadedBy: KindString, FieldCreatedAt: KindTime, FieldUpdatedAt: KindTime,
}

// Operand is a literal or a session variable reference.
type Operand struct {
	Var string // lower-case session variable name, or ""
	Lit Value  // when Var == ""
}

// Value is a typed literal; the kind matches the field it is compared with.
type Value struct {
	Str  string
	Int  int64
	Bool bool
	Time time.Time
}

// Resolve returns the operand's value for a field of kind k; ok is false when a
// variable is missing or does not parse as k.
func (o Operand) Resolve(k FieldKind, vars map[string]string) (Value, bool) {
	if o.Var == "" {
		return o.Lit, true
	}
	s, ok := vars[o.Var]
	if !ok {
		return Value{}, false
	}
	return ParseValue(k, s)
}

// ParseValue parses s as a value of kind k.
func ParseValue(k FieldKind, s string) (Value, bool) {
	switch k {
	case KindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		return Value{Int: n}, err == nil
	case KindBool:
		b, err := strconv.ParseBool(s)
		return Value{Bool: b}, err == nil
	case KindTime:
		t, err := time.Parse(time.RFC3339Nano, s)
		return Value{Time: t.UTC().Truncate(time.Microsecond)}, err == nil
	}
	return Value{Str: s}, true
}

// And is true when every child is (true when empty).
type And []Expr

// Or is true when some child is (false when empty).
type Or []Expr

// Not negates its child.
type Not struct{ X Expr }

// Cmp compares a field with one operand (or a list, for _in/_nin).
type Cmp struct {
	Field string
	Op    string // _eq _neq _gt _gte _lt _lte _in _nin _like _ilike _nlike _nilike _is_null
	Arg   Operand
	List  []Operand // _in, _nin
}

// Match implements Expr.
func (a And) Match(f *File, vars map[string]string) bool {
	for _, x := range a {
		if !x.Match(f, vars) {
			return false
		}
	}
	return true
}

// Match implements Expr.
func (o Or) Match(f *File, vars map[string]string) bool {
	for _, x := range o {
		if x.Match(f, vars) {
			return true
		}
	}
	return false
}

// Match implements Expr.
func (n Not) Match(f *File, vars map[string]string) bool { return !n.X.Match(f, vars) }

// Match implements Expr.
func (c *Cmp) Match(f *File, vars map[string]string) bool {
	k := FieldKinds[c.Field]
	v := FieldValue(f, c.Field)
	switch c.Op {
	case "_is_null":
		return isNull(k, v) == c.Arg.Lit.Bool
	case "_in", "_nin":
		in := false
		for _, o := range c.List {
			if w, ok := o.Resolve(k, vars); ok && compare(k, v, w) == 0 {
				in = true
				break
			}
		}
		return in == (c.Op == "_in")
	}
	w, ok := c.Arg.Resolve(k, vars)
	if !ok {
		return false
	}
	switch c.Op {
	case "_like", "_nlike":
		return Like(v.Str, w.Str, false) == (c.Op == "_like")
	case "_ilike", "_nilike":
		return Like(v.Str, w.Str, true) == (c.Op == "_ilike")
	}
	return cmpOp(c.Op, compare(k, v, w))
}

func cmpOp(op string, r int) bool {
	switch op {
	case "_eq":
		return r == 0
	case "_neq":
		return r != 0
	case "_gt":
		return r > 0
	case "_gte":
		return r >= 0
	case "_lt":
		return r < 0
	case "_lte":
		return r <= 0
	}
	return false
}

// isNull: only uploaded_by_user_id can be null (stored as ""); other fields never are.
func isNull(k FieldKind, v Value) bool { return k == KindString && v.Str == "" }

func compare(k FieldKind, a, b Value) int {
	switch k {
	case KindInt:
		return cmpOrdered(a.Int, b.Int)
	case KindBool:
		return cmpOrdered(b2i(a.Bool), b2i(b.Bool))
	case KindTime:
		return a.Time.Compare(b.Time)
	}
	return strings.Compare(a.Str, b.Str)
}

func cmpOrdered[T int64 | int](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FieldValue returns the value of f's field (one of FieldKinds) that expressions compare.
func FieldValue(f *File, field string) Value {
	switch field {
	case FieldID:
		return Value{Str: f.ID}
	case FieldBucketID:
		return Value{Str: f.BucketID}
	case FieldName:
		return Value{Str: f.Name}
	case FieldSize:
		return Value{Int: f.Size}
	case FieldMimeType:
		return Value{Str: f.MimeType}
	case FieldETag:
		return Value{Str: f.ETag}
	case FieldIsUploaded:
		return Value{Bool: f.IsUploaded}
	case FieldUploadedBy:
		return Value{Str: f.UploadedByUserID}
	case FieldCreatedAt:
		return Value{Time: f.CreatedAt}
	case FieldUpdatedAt:
		return Value{Time: f.UpdatedAt}
	}
	return Value{}
}

// Like matches s against an SQL LIKE pattern: % any run, _ one character, \ escapes
// the next character. fold compares ASCII letters case-insensitively (as SQLite's
// lower() does; PostgreSQL's ILIKE folds all of Unicode).
func Like(s, pattern string, fold bool) bool {
	if fold {
		s, pattern = asciiLower(s), asciiLower(pattern)
	}
	return like([]rune(s), []rune(pattern))
}

// like is the classic wildcard matcher that backtracks only to the last %: O(len(s) *
// len(p)) at worst, so no pattern can make it blow up.
func like(s, p []rune) bool {
	toks := likeTokens(p)
	si, ti, star, mark := 0, 0, -1, 0
	for si < len(s) {
		switch {
		case ti < len(toks) && toks[ti].kind == '%':
			star, mark = ti, si
			ti++
		case ti < len(toks) && (toks[ti].kind == '_' || toks[ti].r == s[si]):
			si++
			ti++
		case star >= 0:
			mark++
			si, ti = mark, star+1
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].kind == '%' {
		ti++
	}
	return ti == len(toks)
}

type likeToken struct {
	kind rune // '%', '_' or 0 for a literal
	r    rune
}

func likeTokens(p []rune) []likeToken {
	toks := make([]likeToken, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			toks = append(toks, likeToken{r: p[i]})
		case c == '%' || c == '_':
			toks = append(toks, likeToken{kind: c})
		default:
			toks = append(toks, likeToken{r: c})
		}
	}
	return toks
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
