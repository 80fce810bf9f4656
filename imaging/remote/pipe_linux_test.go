package remote

import (
	"context"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func pipeSizeOf(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ferr error
	rc.Control(func(fd uintptr) { n, ferr = unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0) })
	if ferr != nil {
		t.Fatal(ferr)
	}
	return n
}

func TestPipesAreEnlarged(t *testing.T) {
	e := newFake(t, 1, 1)
	if _, err := e.Transform(context.Background(), strings.NewReader("x"), opts); err != nil {
		t.Fatal(err)
	}
	c := e.w.peer.(*child)
	in, out := c.stdin.(*os.File), c.stdout.(*os.File)
	if a, b := pipeSizeOf(t, in), pipeSizeOf(t, out); a != pipeSize || b != pipeSize {
		t.Errorf("pipe sizes %d and %d, want %d", a, b, pipeSize)
	}
}
