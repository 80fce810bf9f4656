package metatest

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

var listTests = []test{
	{"List/Order", testListOrder},
	{"List/PrefixLiteral", testListPrefix},
	{"List/Paging", testListPaging},
	{"List/Limit", testListLimit},
	{"List/BadCursor", testListBadCursor},
	{"List/MissingBucket", testListMissingBucket},
	{"List/Delimiter", testListDelimiter},
	{"List/DelimiterFilter", testListDelimiterFilter},
	{"List/BadDelimiter", testListBadDelimiter},
}

// listAll pages through a listing with limit and returns the ids in order and the
// page sizes.
func listAll(t *testing.T, s meta.Store, opt coffer.ListOptions) (got []string, sizes []int) {
	t.Helper()
	for range 1000 {
		page, err := s.ListFiles(t.Context(), opt)
		must(t, err)
		got = append(got, ids(page.Files)...)
		sizes = append(sizes, len(page.Files))
		for _, f := range page.Files {
			checkTime(t, "listed CreatedAt", f.CreatedAt)
			if !f.IsUploaded {
				t.Errorf("listed a not-uploaded file %s", f.ID)
			}
		}
		if page.Next == "" {
			return got, sizes
		}
		opt.Cursor = page.Next
	}
	t.Fatal("listing does not end")
	return nil, nil
}

func testListOrder(t *testing.T, s meta.Store) {
	mustBucket(t, s, "other")
	names := []string{"b", "a", "a/x", "B", "é", "a b", "z", "a", "~", "a-", "Z/é", "e"}
	files := createNames(t, s, coffer.DefaultBucketID, names...)
	createNames(t, s, "other", "a", "b")
	pending := newFile(coffer.DefaultBucketID, "a")
	must(t, s.BeginUpload(t.Context(), pending.BlobKey, pending))
	sortByNameID(files)
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: 1000})
	must(t, err)
	if !slices.Equal(ids(page.Files), ids(files)) || page.Next != "" {
		t.Fatalf("ListFiles order = %v (next %q)\nwant %v", names2(page.Files), page.Next, names2(files))
	}
	for i, f := range page.Files {
		checkFile(t, f, files[i])
	}
}

func names2(files []*coffer.File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out
}

func testListPrefix(t *testing.T, s meta.Store) {
	names := []string{"a%b", "a%bc", "a_b", "axb", "ab", "A%b", "é/1", "é/2", "e/3", "a\\b", "a[b]"}
	createNames(t, s, coffer.DefaultBucketID, names...)
	tests := []struct {
		prefix string
		want   []string
	}{
		{"a%", []string{"a%b", "a%bc"}},
		{"a_", []string{"a_b"}},
		{"a", []string{"a%b", "a%bc", "a[b]", "a\\b", "a_b", "ab", "axb"}},
		{"", nil}, // all
		{"A", []string{"A%b"}},
		{"é/", []string{"é/1", "é/2"}},
		{"a\\", []string{"a\\b"}},
		{"a[", []string{"a[b]"}},
		{"%", []string{}},
		{"zz", []string{}},
		{"a%bcd", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			want := tt.want
			if want == nil {
				want = slices.Clone(names)
			}
			slices.Sort(want)
			page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: tt.prefix})
			must(t, err)
			if got := names2(page.Files); !slices.Equal(got, want) {
				t.Errorf("prefix %q: %q, want %q", tt.prefix, got, want)
			}
		})
	}
}

func testListPaging(t *testing.T, s meta.Store) {
	names := make([]string, 25)
	for i := range names {
		names[i] = fmt.Sprintf("dir/f%02d", i/2) // pairs share a name: the id breaks ties
	}
	files := createNames(t, s, coffer.DefaultBucketID, names...)
	createNames(t, s, coffer.DefaultBucketID, "a-before", "zz-after")
	sortByNameID(files)
	tests := []struct {
		limit int
		sizes []int
	}{
		{10, []int{10, 10, 5}},
		{5, []int{5, 5, 5, 5, 5}},
		{25, []int{25}},
		{24, []int{24, 1}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limit), func(t *testing.T) {
			got, sizes := listAll(t, s, coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: "dir/", Limit: tt.limit})
			if !slices.Equal(got, ids(files)) {
				t.Errorf("paged listing = %d ids, want all %d exactly once in order", len(got), len(files))
			}
			if !slices.Equal(sizes, tt.sizes) {
				t.Errorf("page sizes = %v, want %v", sizes, tt.sizes)
			}
		})
	}
}

func testListLimit(t *testing.T, s meta.Store) {
	names := make([]string, meta.DefaultListLimit+1)
	for i := range names {
		names[i] = fmt.Sprintf("f%03d", i)
	}
	createNames(t, s, coffer.DefaultBucketID, names...)
	for _, tt := range []struct{ limit, want int }{{0, meta.DefaultListLimit}, {-1, meta.DefaultListLimit}, {1, 1}, {1001, len(names)}} {
		page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Limit: tt.limit})
		must(t, err)
		if len(page.Files) != tt.want || (page.Next != "") != (tt.want < len(names)) {
			t.Errorf("limit %d: %d files, next %q; want %d", tt.limit, len(page.Files), page.Next, tt.want)
		}
	}
}

func testListBadCursor(t *testing.T, s meta.Store) {
	createNames(t, s, coffer.DefaultBucketID, "a", "b")
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{"!!!", "a b", enc("foo"), enc(`{"x":1}`), enc(`["a","not-a-uuid"]`), enc(`["a"]`),
		strings.Repeat("A", 5)} {
		_, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Cursor: c})
		wantCode(t, err, coffer.EINVALID)
	}
}

func testListMissingBucket(t *testing.T, s meta.Store) {
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: "nope", Prefix: "x"})
	must(t, err)
	if len(page.Files) != 0 || page.Next != "" {
		t.Errorf("listing a missing bucket = %+v, want empty", page)
	}
}

// delimiterNames are files of a bucket listed with a delimiter: folders of one and
// of many files, nested ones, names that sort between a folder's files and after
// them ("a.txt" < "a/..." < "a0"), several files of one name, non-ASCII names.
var delimiterNames = func() []string {
	names := []string{"a.txt", "a/x", "a/y/z", "a/y/zz", "a-b/c", "a0", "ab", "b", "b",
		"é/1", "é/2/3", "éa", "photos/1.jpg", "photos/2024/a.jpg", "photos/2024/b.jpg",
		"photos/2025/c.jpg", "photos/z.jpg", "photos0", "zz/yy/xx"}
	for i := range 25 {
		names = append(names, fmt.Sprintf("big/%02d", i), fmt.Sprintf("big/d%d/f", i%3))
	}
	return names
}()

// wantEntries is what a listing with delimiter "/" under prefix must return, files
// (their ids) and prefixes ("P:" and the prefix) in order, computed from the files
// (sorted by name and id) that keep decides are listed.
func wantEntries(files []*coffer.File, prefix string, keep func(*coffer.File) bool) []string {
	var out []string
	last := ""
	for _, f := range files {
		rest, ok := strings.CutPrefix(f.Name, prefix)
		if !ok || !keep(f) {
			continue
		}
		dir, _, nested := strings.Cut(rest, "/")
		switch {
		case !nested:
			out = append(out, f.ID)
		case prefix+dir+"/" != last:
			last = prefix + dir + "/"
			out = append(out, "P:"+last)
		}
	}
	return out
}

// pageEntries merges a page's files and prefixes by name into wantEntries' form.
func pageEntries(page coffer.Page) []string {
	var out []string
	ps := page.Prefixes
	for _, f := range page.Files {
		for len(ps) > 0 && ps[0] < f.Name {
			out, ps = append(out, "P:"+ps[0]), ps[1:]
		}
		out = append(out, f.ID)
	}
	for _, p := range ps {
		out = append(out, "P:"+p)
	}
	return out
}

// listEntries pages through a listing and returns its entries, failing t if a page
// holds more than opt.Limit entries or, but for the last, fewer.
func listEntries(t *testing.T, s meta.Store, opt coffer.ListOptions) []string {
	t.Helper()
	var got []string
	for range 1000 {
		page, err := s.ListFiles(t.Context(), opt)
		must(t, err)
		n := len(page.Files) + len(page.Prefixes)
		if n > opt.Limit || (page.Next != "" && n != opt.Limit) {
			t.Fatalf("page of %d entries (limit %d, next %q)", n, opt.Limit, page.Next)
		}
		if !slices.IsSorted(page.Prefixes) || len(slices.Compact(slices.Clone(page.Prefixes))) != len(page.Prefixes) {
			t.Fatalf("prefixes %q not sorted or repeated", page.Prefixes)
		}
		got = append(got, pageEntries(page)...)
		if page.Next == "" {
			return got
		}
		opt.Cursor = page.Next
	}
	t.Fatal("listing does not end")
	return nil
}

func testListDelimiter(t *testing.T, s meta.Store) {
	files := createNames(t, s, coffer.DefaultBucketID, delimiterNames...)
	sortByNameID(files)
	all := func(*coffer.File) bool { return true }
	for _, prefix := range []string{"", "a", "a/", "a/y/", "a/y/z", "big/", "big/d1/", "é", "é/", "photos", "photos/",
		"photos/2024/", "nope/", "zz/", "zz/yy/", "b"} {
		want := wantEntries(files, prefix, all)
		for _, limit := range []int{1, 2, 3, 7, 1000} {
			got := listEntries(t, s, coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: prefix, Limit: limit, Delimiter: "/"})
			if !slices.Equal(got, want) {
				t.Errorf("prefix %q limit %d: entries\n%q\nwant\n%q", prefix, limit, got, want)
			}
		}
	}
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: "photos/", Delimiter: "/"})
	must(t, err)
	if want := []string{"photos/2024/", "photos/2025/"}; !slices.Equal(page.Prefixes, want) || len(page.Files) != 2 {
		t.Errorf("photos/: prefixes %q (want %q), files %q", page.Prefixes, want, names2(page.Files))
	}
}

// testListDelimiterFilter: a filtered listing shows a prefix only if a file it keeps
// is under it, and pages through exactly those.
func testListDelimiterFilter(t *testing.T, s meta.Store) {
	owners := map[string]string{"f/alice/1": "alice", "f/bob/1": "bob", "f/mixed/1": "bob", "f/mixed/2": "alice",
		"f/top-bob": "bob", "f/top-alice": "alice", "f/deep/bob/1": "bob", "f/deep/alice/x/1": "alice", "g/bob": "bob"}
	for i := range 12 {
		owners[fmt.Sprintf("f/bobs/%02d", i)] = "bob"
	}
	var files []*coffer.File
	for name, owner := range owners {
		f := newFile(coffer.DefaultBucketID, name)
		f.UploadedByUserID = owner
		files = append(files, f)
	}
	create(t, s, files...)
	sortByNameID(files)
	filter := &coffer.Cmp{Field: coffer.FieldUploadedBy, Op: "_eq", Arg: coffer.Operand{Var: "x-hasura-user-id"}}
	vars := map[string]string{"x-hasura-user-id": "alice"}
	alice := func(f *coffer.File) bool { return f.UploadedByUserID == "alice" }
	for _, prefix := range []string{"", "f/", "f/deep/", "g/"} {
		want := wantEntries(files, prefix, alice)
		for _, limit := range []int{1, 2, 1000} {
			got := listEntries(t, s, coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: prefix, Limit: limit,
				Delimiter: "/", Filter: filter, Vars: vars})
			if !slices.Equal(got, want) {
				t.Errorf("prefix %q limit %d: entries\n%q\nwant\n%q", prefix, limit, got, want)
			}
		}
	}
	page, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Prefix: "f/", Delimiter: "/",
		Filter: filter, Vars: vars})
	must(t, err)
	if want := []string{"f/alice/", "f/deep/", "f/mixed/"}; !slices.Equal(page.Prefixes, want) {
		t.Errorf("alice's prefixes under f/: %q, want %q", page.Prefixes, want)
	}
}

func testListBadDelimiter(t *testing.T, s meta.Store) {
	createNames(t, s, coffer.DefaultBucketID, "a/b")
	for _, d := range []string{"x", "//", "\\", " ", "."} {
		_, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Delimiter: d})
		wantCode(t, err, coffer.EINVALID)
	}
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, c := range []string{enc(`["a"]`), enc(`["a/","b","c"]`), enc(`[]`), enc(`["a/",""]`)} {
		_, err := s.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Delimiter: "/", Cursor: c})
		wantCode(t, err, coffer.EINVALID)
	}
}
