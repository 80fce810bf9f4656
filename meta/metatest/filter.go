package metatest

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var filterTests = []test{
	{"ListFilterMatchesExpr", testListFilterMatchesExpr},
	{"ListFilterPaging", testListFilterPaging},
}

var (
	fWords = []string{"", "a", "ab", "A", "b.txt", "x%y", "a_b", "img/p.png", "B.TXT", "日本", "z\\"}
	fPats  = []string{"%", "a%", "%.txt", "_", "a_b", "%\\%%", "A%", "%b%", "img/%", "\\_%", "z\\", "日_"}
)

func filterFiles(t *testing.T, s meta.Store) []*coffer.File {
	t.Helper()
	r := rand.New(rand.NewSource(7))
	var files []*coffer.File
	for i := 0; i < 40; i++ {
		f := newFile(coffer.DefaultBucketID, fmt.Sprintf("%s-%02d", fWords[r.Intn(len(fWords))], i))
		f.MimeType = fWords[r.Intn(len(fWords))]
		f.UploadedByUserID = fWords[r.Intn(len(fWords))]
		f.Size = int64(r.Intn(5) * 10)
		files = append(files, f)
	}
	create(t, s, files...)
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: 1000})
	must(t, err)
	return page.Files
}

func randOperand(r *rand.Rand, field string, now time.Time) coffer.Operand {
	if r.Intn(4) == 0 {
		return coffer.Operand{Var: []string{"x-hasura-user-id", "x-hasura-size", "x-hasura-missing", "x-hasura-time"}[r.Intn(4)]}
	}
	switch coffer.FieldKinds[field] {
	case coffer.KindInt:
		return coffer.Operand{Lit: coffer.Value{Int: int64(r.Intn(5) * 10)}}
	case coffer.KindBool:
		return coffer.Operand{Lit: coffer.Value{Bool: r.Intn(2) == 0}}
	case coffer.KindTime:
		return coffer.Operand{Lit: coffer.Value{Time: now.Add(time.Duration(r.Intn(3)-1) * time.Hour)}}
	}
	if field == coffer.FieldID && r.Intn(2) == 0 {
		return coffer.Operand{Lit: coffer.Value{Str: "8"}}
	}
	return coffer.Operand{Lit: coffer.Value{Str: fWords[r.Intn(len(fWords))]}}
}

func randFilter(r *rand.Rand, depth int, now time.Time) coffer.Expr {
	if depth > 0 && r.Intn(3) == 0 {
		switch r.Intn(3) {
		case 0:
			return coffer.Not{X: randFilter(r, depth-1, now)}
		case 1:
			return coffer.And{randFilter(r, depth-1, now), randFilter(r, depth-1, now)}
		}
		return coffer.Or{randFilter(r, depth-1, now), randFilter(r, depth-1, now)}
	}
	fields := []string{"id", "name", "mime_type", "uploaded_by_user_id", "size", "is_uploaded", "created_at", "etag", "bucket_id"}
	field := fields[r.Intn(len(fields))]
	ops := []string{"_eq", "_neq", "_gt", "_gte", "_lt", "_lte", "_in", "_nin", "_is_null"}
	if coffer.FieldKinds[field] == coffer.KindString {
		ops = append(ops, "_like", "_ilike", "_nlike", "_nilike")
	}
	c := &coffer.Cmp{Field: field, Op: ops[r.Intn(len(ops))]}
	switch c.Op {
	case "_is_null":
		c.Arg.Lit.Bool = r.Intn(2) == 0
	case "_in", "_nin":
		c.List = []coffer.Operand{randOperand(r, field, now), randOperand(r, field, now)}
	case "_like", "_ilike", "_nlike", "_nilike":
		c.Arg.Lit.Str = fPats[r.Intn(len(fPats))]
	default:
		c.Arg = randOperand(r, field, now)
	}
	return c
}

func idSet(files []*coffer.File) string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.ID
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// testListFilterMatchesExpr: for random filters, the store returns exactly the files
// coffer.Expr.Match accepts (the in-memory check and the SQL must never disagree).
func testListFilterMatchesExpr(t *testing.T, s meta.Store) {
	all := filterFiles(t, s)
	now := time.Now().UTC()
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 400; i++ {
		e := randFilter(r, 3, now)
		vars := map[string]string{"x-hasura-user-id": fWords[r.Intn(len(fWords))], "x-hasura-size": "20",
			"x-hasura-time": now.Format(time.RFC3339Nano)}
		if r.Intn(3) == 0 {
			vars["x-hasura-size"] = "NaN"
		}
		var want []*coffer.File
		for _, f := range all {
			if e.Match(f, vars) {
				want = append(want, f)
			}
		}
		page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: 1000, Filter: e, Vars: vars})
		if err != nil {
			t.Fatalf("filter %s: %v", describe(e), err)
		}
		if idSet(page.Files) != idSet(want) {
			t.Fatalf("filter %s vars %v: store returned %d files, Match accepts %d", describe(e), vars, len(page.Files), len(want))
		}
	}
}

func describe(e coffer.Expr) string {
	switch x := e.(type) {
	case coffer.And:
		return "and" + describeList(x)
	case coffer.Or:
		return "or" + describeList(x)
	case coffer.Not:
		return "not(" + describe(x.X) + ")"
	case *coffer.Cmp:
		return fmt.Sprintf("%s %s %+v %+v", x.Field, x.Op, x.Arg, x.List)
	}
	return "?"
}

func describeList(xs []coffer.Expr) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = describe(x)
	}
	return "(" + strings.Join(parts, "; ") + ")"
}

// testListFilterPaging: a filtered listing pages through exactly the matching files.
func testListFilterPaging(t *testing.T, s meta.Store) {
	var files []*coffer.File
	for i := 0; i < 30; i++ {
		f := newFile(coffer.DefaultBucketID, fmt.Sprintf("p/%02d", i))
		f.UploadedByUserID = []string{"alice", "bob"}[i%2]
		files = append(files, f)
	}
	create(t, s, files...)
	filter := &coffer.Cmp{Field: coffer.FieldUploadedBy, Op: "_eq", Arg: coffer.Operand{Var: "x-hasura-user-id"}}
	var got []string
	cursor := ""
	for {
		page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: 4, Cursor: cursor,
			Filter: filter, Vars: map[string]string{"x-hasura-user-id": "alice"}})
		must(t, err)
		for _, f := range page.Files {
			if f.UploadedByUserID != "alice" {
				t.Fatalf("filtered page leaked %s of %s", f.Name, f.UploadedByUserID)
			}
			got = append(got, f.Name)
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if len(got) != 15 || got[0] != "p/00" || got[14] != "p/28" {
		t.Fatalf("paged %v", got)
	}
}
