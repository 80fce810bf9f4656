package access

import (
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
)

// The reference interpreter: evaluates the rule JSON directly against a file, written
// as plainly as possible, independent of the compiler.

func refEval(e map[string]any, f *coffer.File, vars map[string]string) bool {
	for k, v := range e {
		if !refKey(k, v, f, vars) {
			return false
		}
	}
	return true
}

func refKey(k string, v any, f *coffer.File, vars map[string]string) bool {
	switch k {
	case "_and":
		for _, x := range v.([]any) {
			if !refEval(x.(map[string]any), f, vars) {
				return false
			}
		}
		return true
	case "_or":
		for _, x := range v.([]any) {
			if refEval(x.(map[string]any), f, vars) {
				return true
			}
		}
		return false
	case "_not":
		return !refEval(v.(map[string]any), f, vars)
	}
	for op, arg := range v.(map[string]any) {
		if !refOp(k, op, arg, f, vars) {
			return false
		}
	}
	return true
}

func refField(f *coffer.File, k string) any {
	return map[string]any{"name": f.Name, "mime_type": f.MimeType, "uploaded_by_user_id": f.UploadedByUserID,
		"size": f.Size, "is_uploaded": f.IsUploaded, "created_at": f.CreatedAt}[k]
}

// refArg resolves a literal or session variable to the field's Go type; ok false if the
// variable is missing or malformed.
func refArg(k string, arg any, vars map[string]string) (any, bool) {
	s, isStr := arg.(string)
	if isStr && strings.HasPrefix(strings.ToLower(s), "x-hasura-") {
		val, ok := vars[strings.ToLower(s)]
		if !ok {
			return nil, false
		}
		switch k {
		case "size":
			n, err := strconv.ParseInt(val, 10, 64)
			return n, err == nil
		case "is_uploaded":
			b, err := strconv.ParseBool(val)
			return b, err == nil
		case "created_at":
			t, err := time.Parse(time.RFC3339Nano, val)
			return t.UTC().Truncate(time.Microsecond), err == nil
		}
		return val, true
	}
	if k == "created_at" {
		t, err := time.Parse(time.RFC3339Nano, s)
		return t.UTC().Truncate(time.Microsecond), err == nil
	}
	return arg, true
}

func refCompare(a, b any) int {
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case int64:
		y := b.(int64)
		if x < y {
			return -1
		} else if x > y {
			return 1
		}
		return 0
	case bool:
		y := b.(bool)
		if x == y {
			return 0
		} else if !x {
			return -1
		}
		return 1
	case time.Time:
		return x.Compare(b.(time.Time))
	}
	panic("type")
}

func refLike(s, pattern string, fold bool) bool {
	var re strings.Builder
	re.WriteString("^(?s)")
	if fold {
		re.WriteString("(?i)")
	}
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '%':
			re.WriteString(".*")
		case '_':
			re.WriteString(".")
		case '\\':
			if i+1 < len(pattern) {
				i++
			}
			re.WriteString(regexp.QuoteMeta(pattern[i : i+1]))
		default:
			re.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	re.WriteString("$")
	return regexp.MustCompile(re.String()).MatchString(s)
}

func refOp(k, op string, arg any, f *coffer.File, vars map[string]string) bool {
	v := refField(f, k)
	switch op {
	case "_is_null":
		s, ok := v.(string)
		return (ok && s == "") == arg.(bool)
	case "_in", "_nin":
		in := false
		for _, item := range arg.([]any) {
			if w, ok := refArg(k, item, vars); ok && refCompare(v, w) == 0 {
				in = true
			}
		}
		return in == (op == "_in")
	}
	w, ok := refArg(k, arg, vars)
	if !ok {
		return false
	}
	switch op {
	case "_like", "_nlike":
		return refLike(v.(string), w.(string), false) == (op == "_like")
	case "_ilike", "_nilike":
		return refLike(v.(string), w.(string), true) == (op == "_ilike")
	}
	r := refCompare(v, w)
	return map[string]bool{"_eq": r == 0, "_neq": r != 0, "_gt": r > 0, "_gte": r >= 0, "_lt": r < 0, "_lte": r <= 0}[op]
}

// Random generation over a small alphabet so that matches are common.

var (
	words  = []string{"", "a", "ab", "A", "b.txt", "x%y", "a_b", "img/p.png", "B.TXT"}
	pats   = []string{"%", "a%", "%.txt", "_", "a_b", "%\\%%", "A%", "%b%", "img/%", "\\_%"}
	times  = []string{"2024-01-01T00:00:00Z", "2024-06-01T12:00:00.5Z", "2025-01-01T00:00:00Z"}
	fields = []string{"name", "mime_type", "uploaded_by_user_id", "size", "is_uploaded", "created_at"}
)

func randArg(r *rand.Rand, field string) any {
	if r.Intn(4) == 0 {
		return []string{"X-Hasura-User-Id", "x-hasura-size", "X-Hasura-Missing", "x-hasura-flag"}[r.Intn(4)]
	}
	switch field {
	case "size":
		return int64(r.Intn(5) * 10)
	case "is_uploaded":
		return r.Intn(2) == 0
	case "created_at":
		return times[r.Intn(len(times))]
	}
	return words[r.Intn(len(words))]
}

func randExpr(r *rand.Rand, depth int) map[string]any {
	if depth > 0 && r.Intn(3) == 0 {
		switch r.Intn(3) {
		case 0:
			return map[string]any{"_not": randExpr(r, depth-1)}
		case 1:
			return map[string]any{"_and": []any{randExpr(r, depth-1), randExpr(r, depth-1)}}
		default:
			return map[string]any{"_or": []any{randExpr(r, depth-1), randExpr(r, depth-1)}}
		}
	}
	field := fields[r.Intn(len(fields))]
	ops := []string{"_eq", "_neq", "_gt", "_gte", "_lt", "_lte", "_in", "_nin", "_is_null"}
	if coffer.FieldKinds[field] == coffer.KindString {
		ops = append(ops, "_like", "_ilike", "_nlike", "_nilike")
	}
	op := ops[r.Intn(len(ops))]
	var arg any
	switch op {
	case "_is_null":
		arg = r.Intn(2) == 0
	case "_in", "_nin":
		arg = []any{randArg(r, field), randArg(r, field)}
	case "_like", "_ilike", "_nlike", "_nilike":
		arg = pats[r.Intn(len(pats))]
	default:
		arg = randArg(r, field)
	}
	return map[string]any{field: map[string]any{op: arg}}
}

// RandomFile returns a file drawn from the same small alphabet.
func randomFile(r *rand.Rand) *coffer.File {
	t, _ := time.Parse(time.RFC3339Nano, times[r.Intn(len(times))])
	return &coffer.File{Name: words[r.Intn(len(words))], MimeType: words[r.Intn(len(words))],
		UploadedByUserID: words[r.Intn(len(words))], Size: int64(r.Intn(5) * 10),
		IsUploaded: r.Intn(2) == 0, CreatedAt: t}
}

func randomVars(r *rand.Rand) map[string]string {
	v := map[string]string{"x-hasura-user-id": words[r.Intn(len(words))], "x-hasura-size": fmt.Sprint(r.Intn(5) * 10)}
	if r.Intn(2) == 0 {
		v["x-hasura-size"] = "not-a-number"
	}
	if r.Intn(2) == 0 {
		v["x-hasura-flag"] = "true"
	}
	return v
}

func TestCompiledMatchesReference(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 3000; i++ {
		raw := randExpr(r, 3)
		e, err := CompileExpr(normalize(raw), "e")
		if err != nil {
			t.Fatalf("compile %v: %v", raw, err)
		}
		for j := 0; j < 20; j++ {
			f, vars := randomFile(r), randomVars(r)
			if got, want := e.Match(f, vars), refEval(raw, f, vars); got != want {
				t.Fatalf("expr %v on %+v vars %v: compiled %v, reference %v", raw, f, vars, got, want)
			}
		}
	}
}
