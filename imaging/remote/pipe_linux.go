package remote

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe asks for a pipe of pipeSize bytes; if the system refuses, the pipe keeps
// its size, which only costs speed.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn() // not f.Fd(): that would make the file blocking
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		_, _ = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, pipeSize)
	})
}
