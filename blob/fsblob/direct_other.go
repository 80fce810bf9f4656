//go:build !linux

package fsblob

import (
	"errors"
	"os"
)

// errDirectRefused never matches: setDirect never turns O_DIRECT on here.
var errDirectRefused = errors.New("fsblob: O_DIRECT is not used on this platform")

// setDirect reports that O_DIRECT is not available; writes stay buffered.
func setDirect(_ *os.File, on bool) error {
	if !on {
		return nil
	}
	return errors.ErrUnsupported
}
