//go:build !unix

package clamd

import "net"

// replied cannot peek here: an early reply is caught only when clamd closes the
// connection on it (a failed write).
func replied(net.Conn) bool { return false }
