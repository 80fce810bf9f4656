package meta

import (
	"testing"

	"github.com/coffer/coffer"
)

func FuzzDecodeCursor(f *testing.F) {
	f.Add(EncodeCursor("a/b.txt", "6f1e7a3c-8a4b-4c2d-9e1f-0a1b2c3d4e5f"))
	f.Add("!!")
	f.Add("")
	f.Fuzz(func(t *testing.T, c string) {
		name, id, err := DecodeCursor(c)
		if err != nil {
			if coffer.ErrorCode(err) != coffer.EINVALID {
				t.Fatalf("code %q", coffer.ErrorCode(err))
			}
			return
		}
		if _, err := coffer.ParseFileID(id); err != nil {
			t.Fatalf("cursor with bad id %q accepted", id)
		}
		n2, id2, err := DecodeCursor(EncodeCursor(name, id))
		if err != nil || n2 != name || id2 != id {
			t.Fatalf("round trip of (%q,%q) failed", name, id)
		}
	})
}
