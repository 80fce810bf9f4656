package edge

import (
	"errors"
	"io"
	"os"
	"sync"
)

// fill is a body being written to a temp file while readers follow it. Its
// readers never see a clean end before the writer finished and verified the
// body: a failed fill fails every read after the failure, even of bytes that
// had arrived, so no client takes a broken object for a whole one.
type fill struct {
	mu   sync.Mutex
	cond sync.Cond
	path string // the body file: the temp file, then the committed one
	n    int64  // bytes written and readable
	size int64  // expected size, -1 when unknown
	done bool   // complete and verified
	err  error  // the fill failed
}

func newFill(path string, size int64) *fill {
	fl := &fill{path: path, size: size}
	fl.cond.L = &fl.mu
	return fl
}

// advance makes k more bytes readable.
func (fl *fill) advance(k int) {
	fl.mu.Lock()
	fl.n += int64(k)
	fl.mu.Unlock()
	fl.cond.Broadcast()
}

// finish ends the fill: err nil means complete (commit already moved path).
func (fl *fill) finish(err error) {
	fl.mu.Lock()
	if err != nil {
		fl.err = err
	} else {
		fl.done = true
	}
	fl.mu.Unlock()
	fl.cond.Broadcast()
}

// reader opens a reader following the fill. The file is opened under fl.mu so
// a commit (rename) cannot move it away between looking up the path and open.
func (fl *fill) reader() (*fillReader, error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	if fl.err != nil {
		return nil, fl.err
	}
	f, err := os.Open(fl.path)
	if err != nil {
		return nil, err
	}
	return &fillReader{fl: fl, f: f}, nil
}

// wait blocks until byte pos is readable, the fill ended or failed, and
// returns how many bytes are readable and whether the fill is complete.
func (fl *fill) wait(pos int64) (n int64, done bool, err error) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	for pos >= fl.n && !fl.done && fl.err == nil {
		fl.cond.Wait()
	}
	return fl.n, fl.done, fl.err
}

// errSeek is a seek a reader cannot do.
var errSeek = errors.New("edge: seek out of range or on an object of unknown size")

// fillReader reads a fill from its own file descriptor: it blocks for bytes not
// yet written and fails (never io.EOF) when the fill fails.
type fillReader struct {
	fl  *fill
	f   *os.File
	pos int64
}

// Read implements io.Reader.
func (r *fillReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, done, err := r.fl.wait(r.pos)
	if err != nil {
		return 0, err
	}
	if r.pos >= n {
		if done {
			return 0, io.EOF
		}
		return 0, io.ErrUnexpectedEOF // not reached: wait returns only past pos
	}
	if avail := n - r.pos; int64(len(p)) > avail {
		p = p[:avail]
	}
	k, err := r.f.ReadAt(p, r.pos)
	r.pos += int64(k)
	if err == io.EOF && k == len(p) {
		err = nil
	}
	return k, err
}

// Seek implements io.Seeker when the size is known; with an unknown size only
// the current position can be asked.
func (r *fillReader) Seek(off int64, whence int) (int64, error) {
	abs, err := seekTo(r.pos, r.fl.size, off, whence)
	if err == nil {
		r.pos = abs
	}
	return abs, err
}

// seekTo computes a seek's target from pos in a body of size (-1 unknown:
// then only the current position may be asked for).
func seekTo(pos, size, off int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = off
	case io.SeekCurrent:
		abs = pos + off
	case io.SeekEnd:
		if size < 0 {
			return 0, errSeek
		}
		abs = size + off
	default:
		return 0, errSeek
	}
	if abs < 0 || (size >= 0 && abs > size) || (size < 0 && abs != pos) {
		return 0, errSeek
	}
	return abs, nil
}

// Close releases the reader's file descriptor.
func (r *fillReader) Close() error { return r.f.Close() }
