package app

import (
	"fmt"
	"net"
)

// validateDebugListen normalizes --debug-listen (127.0.0.1 for a port alone) and
// refuses the API's and the metrics' addresses: profiles are never served where
// clients or scrapers reach.
func (c *Config) validateDebugListen() error {
	if c.DebugListen == "" {
		return nil
	}
	addr, err := sideAddr("--debug-listen", c.DebugListen)
	if err != nil {
		return err
	}
	c.DebugListen = addr
	for _, other := range []struct{ flag, addr string }{{"--listen", c.Listen}, {"--metrics-listen", c.MetricsListen}} {
		if other.addr != "" && sameAddr(addr, other.addr) {
			return fmt.Errorf("--debug-listen: %s is also %s: pprof needs a listener of its own", addr, other.flag)
		}
	}
	return nil
}

// sameAddr reports whether a and b name the same listener: equal, or the same port
// where either is unspecified ("", 0.0.0.0, ::), which binds every address.
func sameAddr(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return a == b
	}
	if pa != pb || pa == "0" {
		return false
	}
	any := func(h string) bool { return h == "" || h == "0.0.0.0" || h == "::" }
	return ha == hb || any(ha) || any(hb)
}
