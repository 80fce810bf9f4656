package meta

import (
	"testing"

	"github.com/coffer/coffer"
)

// TestPreconditionCheck covers every combination of condition and existing file.
func TestPreconditionCheck(t *testing.T) {
	f := &coffer.File{ETag: `"abc"`}
	tests := []struct {
		name     string
		p        Precondition
		existing *coffer.File
		ok       bool
	}{
		{"unconditional create", Precondition{}, nil, true},
		{"unconditional replace", Precondition{}, f, true},
		{"if-match any, none", Precondition{IfMatch: "*"}, nil, false},
		{"if-match any, exists", Precondition{IfMatch: "*"}, f, true},
		{"if-match tag, same", Precondition{IfMatch: `"abc"`}, f, true},
		{"if-match tag, other", Precondition{IfMatch: `"abd"`}, f, false},
		{"if-match tag, unquoted", Precondition{IfMatch: `abc`}, f, false},
		{"if-match tag, none", Precondition{IfMatch: `"abc"`}, nil, false},
		{"if-none-match any, none", Precondition{IfNoneMatch: "*"}, nil, true},
		{"if-none-match any, exists", Precondition{IfNoneMatch: "*"}, f, false},
		{"if-none-match tag, same", Precondition{IfNoneMatch: `"abc"`}, f, false},
		{"if-none-match tag, other", Precondition{IfNoneMatch: `"x"`}, f, true},
		{"if-none-match tag, none", Precondition{IfNoneMatch: `"abc"`}, nil, true},
		{"both hold", Precondition{IfMatch: `"abc"`, IfNoneMatch: `"x"`}, f, true},
		{"match holds, none-match fails", Precondition{IfMatch: "*", IfNoneMatch: `"abc"`}, f, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Check(tt.existing)
			if tt.ok && err != nil {
				t.Fatalf("Check = %v, want nil", err)
			}
			if !tt.ok && coffer.ErrorCode(err) != coffer.EPRECONDITION {
				t.Fatalf("Check = %v, want code %q", err, coffer.EPRECONDITION)
			}
		})
	}
}
