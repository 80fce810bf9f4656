package cache

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"

	"github.com/coffer/coffer/blob"
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
// for connections, blobs being written and the stores.
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
	f *sharedFile
}

// sharedFile is an open blob file used by the cache and by every reader opened from
// it; it is closed when the last of them lets go.
type sharedFile struct {
	r    blob.Reader // owns the file
	f    *os.File
	size int64
	refs atomic.Int64
	// cached is true while the cache holds its reference (one of refs).
	cached atomic.Bool
	// head is the file's first bytes: net/http reads them (to sniff, before it hands
	// the rest to sendfile) with no system call.
	head []byte
}

// headSize is net/http's sniffLen.
const headSize = 512

func newSharedFile(r blob.Reader, f *os.File, size int64) (*sharedFile, error) {
	s := &sharedFile{r: r, f: f, size: size, head: make([]byte, min(size, headSize))}
	if _, err := f.ReadAt(s.head, 0); err != nil {
		return nil, err
	}
	s.refs.Store(1) // the cache's
	s.cached.Store(true)
	return s, nil
}

// dropCacheRef lets go of the cache's reference, once: an eviction and a load
// that turned out not to be cached may both try.
func (s *sharedFile) dropCacheRef() {
	if s.cached.CompareAndSwap(true, false) {
		s.release()
	}
}

// acquire takes a reference unless the file is already closed or closing.
func (s *sharedFile) acquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *sharedFile) release() {
	if s.refs.Add(-1) == 0 {
		_ = s.r.Close()
	}
}

// osFileOf finds the *os.File under a blob reader, nil if there is none.
func osFileOf(r blob.Reader) *os.File {
	if of, ok := blob.As[blob.OSFiler](r); ok {
		return of.OSFile()
	}
	return nil
}

// fileReader reads a shared file at its own offset (pread), so readers never share
// a file position. SendFile hands the file and offset to a server that can use
// sendfile with an explicit offset.
type fileReader struct {
	s      *sharedFile
	key    string
	off    int64
	closed bool
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.off >= r.s.size {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.s.size-r.off)]
	if r.off < int64(len(r.s.head)) {
		n := copy(p, r.s.head[r.off:])
		r.off += int64(n)
		return n, nil
	}
	n, err := r.s.f.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *fileReader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.off
	case io.SeekEnd:
		off += r.s.size
	}
	if off < 0 {
		return 0, errors.New("fileReader: negative position")
	}
	r.off = off
	return off, nil
}

var _ blob.FileSender = (*fileReader)(nil)

// SendFile implements blob.FileSender: the file to send from, the current offset, and
// a func to call with the number of bytes sent.
func (r *fileReader) SendFile() (f *os.File, off int64, advance func(int64)) {
	return r.s.f, r.off, func(n int64) { r.off += n }
}

func (r *fileReader) Close() error {
	if !r.closed {
		r.closed = true
		r.s.release()
	}
	return nil
}

func (r *fileReader) Attrs() blob.Attrs { return blob.Attrs{Key: r.key, Size: r.s.size} }
