package service

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta"
)

// trimPage cuts a page past maxPageBytes after a file, keeping the prefixes that
// sort before it and none after, and resumes after that file.
func TestTrimPagePrefixes(t *testing.T) {
	big := json.RawMessage(`"` + strings.Repeat("x", 900<<10) + `"`)
	file := func(name string, md json.RawMessage) *coffer.File {
		return &coffer.File{ID: "00000000-0000-4000-8000-000000000001", Name: name, Metadata: md}
	}
	tests := []struct {
		name         string
		files        []*coffer.File
		prefixes     []string
		wantFiles    int
		wantPrefixes []string
		wantNext     string
	}{
		{"small", []*coffer.File{file("a", nil), file("c", nil)}, []string{"b/", "d/"}, 2, []string{"b/", "d/"}, "next"},
		{"cut after b", []*coffer.File{file("a", big), file("b", big), file("c", big)}, []string{"a/", "b/", "bb/", "d/"},
			2, []string{"a/"}, meta.EncodeCursor("b", "00000000-0000-4000-8000-000000000001")},
		{"cut after the first", []*coffer.File{file("m", big), file("n", big), file("o", big)}, []string{"a/"},
			2, []string{"a/"}, meta.EncodeCursor("n", "00000000-0000-4000-8000-000000000001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page := trimPage(coffer.Page{Files: tt.files, Prefixes: tt.prefixes, Next: "next"})
			if len(page.Files) != tt.wantFiles || !slices.Equal(page.Prefixes, tt.wantPrefixes) || page.Next != tt.wantNext {
				t.Errorf("trimPage: %d files, prefixes %q, next %q; want %d, %q, %q", len(page.Files), page.Prefixes,
					page.Next, tt.wantFiles, tt.wantPrefixes, tt.wantNext)
			}
		})
	}
}
