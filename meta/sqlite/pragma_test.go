package sqlite

import (
	"path/filepath"
	"testing"
)

// TestPragmas checks that every pooled connection runs with the settings the package
// documentation promises.
func TestPragmas(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string]string{"journal_mode": "wal", "synchronous": "1", "foreign_keys": "1", "busy_timeout": "5000"}
	for name, w := range want {
		var got string
		if err := s.db.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("PRAGMA %s = %q, want %q", name, got, w)
		}
	}
}
