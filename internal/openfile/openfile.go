// Package openfile shares one open file among many readers: a cache holds the file
// open (one reference), each reader takes a reference and reads at its own offset
// (pread), and the file is closed when the last reference goes. A Reader is a
// blob.FileSender, so a server sends it with sendfile at the reader's offset,
// after the response header in the same segments (httpserve.Conn), and a hot file
// costs no open, no close and no seek per request.
package openfile

import (
	"errors"
	"io"
	"os"
	"sync/atomic"

	"github.com/coffer/coffer/blob"
)

// Shared is an open file of a known size with reference counting.
type Shared struct {
	f     *os.File
	size  int64
	close func() error // closes f (and what owns it)
	refs  atomic.Int64
	// cached is true while the holder's reference (one of refs) is held.
	cached atomic.Bool
	// head is the file's first bytes, read at New: a reader reads them with no
	// system call (net/http sniffs them before it hands the rest to sendfile).
	head []byte
}

// New returns f, of size bytes, shared with one reference: the holder's, which
// DropCacheRef lets go. It reads the first head bytes of f into memory. closeFn
// closes f when the last reference goes (nil: f.Close).
func New(f *os.File, size int64, head int, closeFn func() error) (*Shared, error) {
	if closeFn == nil {
		closeFn = f.Close
	}
	s := &Shared{f: f, size: size, close: closeFn, head: make([]byte, min(size, int64(head)))}
	if len(s.head) > 0 {
		if _, err := f.ReadAt(s.head, 0); err != nil {
			return nil, err
		}
	}
	s.refs.Store(1)
	s.cached.Store(true)
	return s, nil
}

// Size is the file's size.
func (s *Shared) Size() int64 { return s.size }

// Refs is the number of references held (for tests).
func (s *Shared) Refs() int64 { return s.refs.Load() }

// DropCacheRef lets go of the holder's reference, once: an eviction and a load that
// turned out not to be kept may both try.
func (s *Shared) DropCacheRef() {
	if s.cached.CompareAndSwap(true, false) {
		s.Release()
	}
}

// Acquire takes a reference unless the file is already closed or closing.
func (s *Shared) Acquire() bool {
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

// Release lets go of a reference, closing the file with the last one.
func (s *Shared) Release() {
	if s.refs.Add(-1) == 0 {
		_ = s.close()
	}
}

// Reader returns a reader from offset 0 that owns one reference, already taken
// (Acquire, or New's for a file nobody holds): its Close releases it.
func (s *Shared) Reader() *Reader { return &Reader{s: s} }

// Reader reads a Shared file at its own offset.
type Reader struct {
	s      *Shared
	off    int64
	closed bool
}

var (
	_ io.ReadSeekCloser = (*Reader)(nil)
	_ blob.FileSender   = (*Reader)(nil)
)

// Shared is the file r reads.
func (r *Reader) Shared() *Shared { return r.s }

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
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

// Seek implements io.Seeker, without a system call.
func (r *Reader) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += r.off
	case io.SeekEnd:
		off += r.s.size
	}
	if off < 0 {
		return 0, errors.New("openfile: negative position")
	}
	r.off = off
	return off, nil
}

// SendFile implements blob.FileSender: the file to send from, the current offset,
// and a func to call with the number of bytes sent.
func (r *Reader) SendFile() (f *os.File, off int64, advance func(int64)) {
	return r.s.f, r.off, func(n int64) { r.off += n }
}

// Close releases the reader's reference, once.
func (r *Reader) Close() error {
	if !r.closed {
		r.closed = true
		r.s.Release()
	}
	return nil
}
