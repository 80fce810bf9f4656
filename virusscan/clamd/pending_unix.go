//go:build unix

package clamd

import (
	"net"
	"syscall"
)

// replied reports whether clamd has already sent bytes that were not read yet: a
// peek (MSG_PEEK|MSG_DONTWAIT) that neither blocks nor consumes them. A connection
// closed with nothing to read is not a reply: the verdict's read reports it.
func replied(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	n := 0
	rc.Read(func(fd uintptr) bool {
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true // never wait: EAGAIN means nothing is there
	})
	return n > 0
}
