package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

// The server must not link libvips (its ~100 shared libraries cost ~43 MB of RSS at
// idle): only coffer-imager does. The test binary links what the server links.
func TestServerDoesNotLinkLibvips(t *testing.T) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	if len(bi.Deps) == 0 {
		t.Fatal("build info lists no modules: the check would prove nothing")
	}
	for _, m := range bi.Deps {
		if strings.Contains(m.Path, "govips") {
			t.Fatalf("cmd/coffer links %s", m.Path)
		}
	}
}
