package sqlite

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/meta/internal/sqlcore"
	"github.com/coffer/coffer/meta/metatest"
)

// countingConn counts the rows its queries return to the core.
type countingConn struct {
	*conn
	rows int
}

// Query runs the statement and counts the rows read from it.
func (c *countingConn) Query(ctx context.Context, q string, args ...any) (sqlcore.Rows, error) {
	rows, err := c.conn.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return &countingRows{Rows: rows, n: &c.rows}, nil
}

type countingRows struct {
	sqlcore.Rows
	n *int
}

// Next counts a row.
func (r *countingRows) Next() bool {
	ok := r.Rows.Next()
	if ok {
		*r.n++
	}
	return ok
}

// A listing with a delimiter reads a row or so per prefix, not every name under
// them: the skip-scan seeks past each folder (the scan it replaces reads 1,500 rows
// here).
func TestListSkipScanReadsFewRows(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := metatest.FillFolders(t.Context(), s, 5, 300); err != nil {
		t.Fatal(err)
	}
	cc := &countingConn{conn: newConn(s.db)}
	core := sqlcore.New(cc, newDialect())
	for _, tt := range []struct {
		limit, maxRows int
		want           []string
	}{
		{100, 5, []string{"d000/", "d001/", "d002/", "d003/", "d004/"}},
		{2, 3, []string{"d000/", "d001/"}}, // and the third prefix, to know there is a next page
	} {
		cc.rows = 0
		p, err := core.ListFiles(t.Context(), coffer.ListOptions{BucketID: coffer.DefaultBucketID, Delimiter: "/", Limit: tt.limit})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(p.Prefixes, tt.want) || len(p.Files) != 0 || cc.rows > tt.maxRows {
			t.Errorf("limit %d: prefixes %q, %d files, %d rows read (at most %d)", tt.limit, p.Prefixes, len(p.Files), cc.rows, tt.maxRows)
		}
	}
}
