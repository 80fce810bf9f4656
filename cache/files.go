package cache

import (
	"os"
	"syscall"

	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/internal/openfile"
)

// Blobs on disk of at least sendfileMin bytes are held as open files rather than
// bytes: their contents stay in the kernel's page cache and leave with sendfile,
// which spares a copy into the socket on the sending side and lets the receiver copy
// from pages that stay hot. An open file weighs a fixed share of the cache
// (ContentConfig.MaxOpenFiles), which bounds the open descriptors without counting
// page-cache bytes as ours: a 100 KB file held open costs a descriptor, not 100 KB.
const sendfileMin = 16 << 10

// openFileBudget is the default bound on open cached files: half the process's
// descriptor limit (Go raises the soft limit to the hard one at start, so this is
// what the process may really open), between 256 and 16,384, leaving the other half
// for connections, blobs being written, the stores and the sites' edge cache (which
// keeps up to an eighth: site/edge Config.MaxOpenFiles).
func openFileBudget() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 1024
	}
	return int64(min(max(rl.Cur/2, 256), 16384))
}

// entry is a cached blob: its bytes, or an open file.
type entry struct {
	b []byte
	f *openfile.Shared
}

// headSize is net/http's sniffLen: the first bytes of a kept file are held in
// memory, so net/http sniffs them (before it hands the rest to sendfile) with no
// system call.
const headSize = 512

// newSharedFile shares f, the open file of blob reader r, of size bytes; the last
// reference closes r.
func newSharedFile(r blob.Reader, f *os.File, size int64) (*openfile.Shared, error) {
	return openfile.New(f, size, headSize, r.Close)
}

// osFileOf finds the *os.File under a blob reader, nil if there is none.
func osFileOf(r blob.Reader) *os.File {
	if of, ok := blob.As[blob.OSFiler](r); ok {
		return of.OSFile()
	}
	return nil
}

// fileReader reads a shared file at its own offset (pread), so readers never share
// a file position; it is a blob.FileSender (openfile.Reader) and a blob.Reader.
type fileReader struct {
	*openfile.Reader
	key string
}

var _ blob.FileSender = (*fileReader)(nil)

func (r *fileReader) Attrs() blob.Attrs { return blob.Attrs{Key: r.key, Size: r.Shared().Size()} }
