package httpserve

import (
	"io"

	"github.com/coffer/coffer/blob"
)

// SeekerOf returns what http.ServeContent should read an open blob from: the *os.File
// under a disk blob, so that it can sendfile, else the driver's own reader
// (blob.Innermost: as before, those bytes are not counted in the blob store's read
// bytes, like those sent with sendfile).
func SeekerOf(rd blob.Reader) io.ReadSeeker {
	if of, ok := blob.As[blob.OSFiler](rd); ok {
		return of.OSFile()
	}
	return blob.Innermost(rd)
}
