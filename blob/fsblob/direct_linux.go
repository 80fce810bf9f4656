package fsblob

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errDirectRefused is what a write returns when the filesystem does not take O_DIRECT.
var errDirectRefused = syscall.EINVAL

// setDirect turns O_DIRECT on or off for f's later writes.
func setDirect(f *os.File, on bool) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if err != nil {
			serr = err
			return
		}
		if on {
			flags |= unix.O_DIRECT
		} else {
			flags &^= unix.O_DIRECT
		}
		_, serr = unix.FcntlInt(fd, unix.F_SETFL, flags)
	})
	if err != nil {
		return err
	}
	return serr
}
