package rpcapi

import (
	"compress/gzip"
	"errors"
	"io"
	"net/http"

	"connectrpc.com/connect"
)

// connect-go refuses a message over the limit (Config.ReadMaxBytes) with
// RESOURCE_EXHAUSTED, but first reads the rest of it to report its size: the whole
// body, however large, and for a gzipped message all that it decompresses to. It does
// so before any method (and its credential check) runs, so an anonymous client could
// make the server read a body without end, or spend about 0.3 s of CPU on each
// 1 MB gzip bomb of 1 GiB. The two bounds below stop both at the limit.

// bodySlack is what a request body may hold beyond one message of the limit: the
// gRPC and gRPC-Web framing (5 bytes a message) and the small requests of a
// reflection stream, with room to spare.
const bodySlack = 64 << 10

// limitBody bounds r's body to max bytes and bodySlack: past that, reading it fails
// (and the connection is closed after the answer).
func limitBody(w http.ResponseWriter, r *http.Request, max int) {
	r.Body = http.MaxBytesReader(w, r.Body, int64(max)+bodySlack)
}

// errInflated is the error of a gzipped message that decompresses past the limit.
var errInflated = errors.New("the message decompresses to more than the limit")

// limitedGzip is the face's gzip decompressor: the standard one, failing once it
// has produced one byte more than max (enough for connect-go to see the message is
// over the limit, and no more).
type limitedGzip struct {
	gzip.Reader
	max, left int64
}

// gzipCompression is the handler option of gzip with limitedGzip, and the standard
// compressor for responses (connect-go's default).
func gzipCompression(max int) connect.HandlerOption {
	return connect.WithCompression("gzip",
		func() connect.Decompressor { return &limitedGzip{max: int64(max)} },
		func() connect.Compressor { return gzip.NewWriter(nil) })
}

// Read decompresses into p, up to max+1 bytes in all.
func (d *limitedGzip) Read(p []byte) (int, error) {
	if d.left <= 0 {
		return 0, errInflated
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.Reader.Read(p)
	d.left -= int64(n)
	return n, err
}

// Reset starts decompressing r, with the whole allowance again.
func (d *limitedGzip) Reset(r io.Reader) error {
	d.left = d.max + 1
	return d.Reader.Reset(r)
}
