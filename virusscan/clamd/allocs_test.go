package clamd_test

import (
	"context"
	"testing"

	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
)

// Writing to a stream allocates nothing per write: memory stays flat however large
// the upload (the garbage of per-chunk allocations would grow the heap to the GC goal).
func TestWriteDoesNotAllocate(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{})
	c := client(t, d.Addr, 0)
	s, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	buf := make([]byte, 32<<10)
	if n := testing.AllocsPerRun(200, func() { s.Write(buf) }); n > 0 {
		t.Fatalf("%.1f allocations per write, want 0", n)
	}
}
