package blob

import (
	"bytes"
	"io"
)

// BytesReader returns a Reader over b, which must not change, named key in its Attrs.
// It hands out its bytes without copying (NextBytes), so servers can send them in one
// write: the hot-content cache serves small blobs through it, and faces serve
// transformed images.
func BytesReader(key string, b []byte) Reader {
	m := &memReader{b: b, key: key} // one allocation: the bytes.Reader is inside
	m.Reader.Reset(b)
	return m
}

// memReader is a blob in memory.
type memReader struct {
	bytes.Reader
	b   []byte
	key string
}

// NextBytes returns the next n bytes (fewer at the end) without copying and moves
// past them, so a server can write cached contents in one call.
func (m *memReader) NextBytes(n int64) []byte {
	pos := m.Reader.Size() - int64(m.Reader.Len())
	end := min(pos+max(n, 0), int64(len(m.b)))
	_, _ = m.Reader.Seek(end, io.SeekStart)
	return m.b[pos:end]
}

// Close does nothing: there is nothing to release.
func (m *memReader) Close() error { return nil }

// Attrs returns the key and size.
func (m *memReader) Attrs() Attrs {
	return Attrs{Key: m.key, Size: m.Reader.Size()}
}
