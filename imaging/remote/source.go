package remote

import (
	"io"
	"sync"
)

// source is the worker's side of one request's source stream: the serve loop appends
// chunks as they arrive and never blocks; the transform reads them. It holds at most
// limit bytes: the rest is dropped, and the reader, having read limit bytes, sees
// EOF, so the engine's own MaxSourceBytes check refuses the source (ETOOLARGE).
type source struct {
	mu     sync.Mutex
	cond   sync.Cond
	chunks [][]byte
	held   int64 // bytes appended so far (at most limit)
	limit  int64
	size   int64 // the server's size hint
	done   bool  // the last chunk arrived
	err    error // set by abort: reads fail with it
}

func newSource(limit, size int64) *source {
	s := &source{limit: limit, size: size}
	s.cond.L = &s.mu
	return s
}

// push appends b (the frame's buffer is not kept) and, if last, ends the stream.
func (s *source) push(b []byte, last bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := min(int64(len(b)), s.limit-s.held); n > 0 {
		s.chunks = append(s.chunks, b[:n])
		s.held += n
	}
	s.done = s.done || last
	s.cond.Broadcast()
}

// abort makes pending and future reads fail with err.
func (s *source) abort(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.cond.Broadcast()
}

// Read implements io.Reader.
func (s *source) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.chunks) == 0 && !s.done && s.err == nil && s.held < s.limit {
		s.cond.Wait()
	}
	if s.err != nil {
		return 0, s.err
	}
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; len(s.chunks[0]) == 0 {
		s.chunks[0] = nil
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// Size returns the server's size hint, so the engine sizes its buffer at once.
func (s *source) Size() int64 { return s.size }
