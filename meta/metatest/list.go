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
