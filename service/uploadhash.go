package service

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"math"
	"sync"

	"lukechampine.com/blake3"
)

// The ETag of an uploaded file is the quoted hex digest of its contents: MD5 by
// default, as hasura-storage's (the S3 ETag of a single-part put), or BLAKE3
// (Config.ETag). MD5 runs at well under disk speed on one core (about 1.2 s/GiB
// here), so a large upload hashes MD5 on a goroutine of its own: chunks of the stream
// are copied aside and hashed there while the next ones are read and written to the
// blob. BLAKE3 keeps up with the disk on the request's goroutine, so it hashes
// inline, but in pieces of batchSize at least (batchedHash): it is fast only on large
// writes (on this machine 6 GB/s in 1 MiB writes, 2 GB/s in 64 KiB ones, 0.5 GB/s in
// the 4 KiB ones a multipart part often yields, slower than MD5).
const (
	hashChunkSize = 1 << 20   // bytes hashed per hand-off to the hashing goroutine
	hashSyncBytes = 256 << 10 // the first bytes hash inline: small uploads start no goroutine
)

// hashChunks holds the chunks of hashPipes between uploads.
var hashChunks = sync.Pool{New: func() any { b := make([]byte, hashChunkSize); return &b }}

// hashPipe is an io.Writer computing a hash of what is written to it: inline up to
// inline bytes, then on a goroutine of its own, in chunks, two at most in flight.
// Sum returns the digest; close must always be called (it stops the goroutine and
// returns the chunks to the pool). Not safe for concurrent use.
type hashPipe struct {
	h       hash.Hash
	inline  int64     // bytes hashed inline before the goroutine starts
	n       int64     // bytes written
	cur     *[]byte   // the chunk being filled, or nil
	fill    int       // bytes in cur
	spare   []*[]byte // hashed chunks, free
	owned   int       // chunks taken from the pool
	busy    int       // chunks sent to the goroutine, not yet back
	work    chan *[]byte
	freed   chan *[]byte
	stopped bool
}

// newHashPipe returns a hashPipe for the ETag hash named kind (ETagMD5 or ETagBLAKE3).
func newHashPipe(kind string) *hashPipe {
	if kind == ETagBLAKE3 {
		return &hashPipe{h: &batchedHash{Hash: blake3.New(32, nil)}, inline: math.MaxInt64}
	}
	return &hashPipe{h: md5.New(), inline: hashSyncBytes}
}

// Write implements io.Writer; it never fails.
func (m *hashPipe) Write(p []byte) (int, error) {
	n := len(p)
	if m.work == nil && m.n+int64(n) <= m.inline {
		m.n += int64(n)
		m.h.Write(p)
		return n, nil
	}
	m.n += int64(n)
	for len(p) > 0 {
		if m.cur == nil {
			m.cur, m.fill = m.take(), 0
		}
		c := copy((*m.cur)[m.fill:], p)
		m.fill += c
		p = p[c:]
		if m.fill == hashChunkSize {
			m.send()
		}
	}
	return n, nil
}

// take returns a free chunk: a hashed one, a new one from the pool (two at most), or
// the next one the goroutine hands back.
func (m *hashPipe) take() *[]byte {
	if k := len(m.spare); k > 0 {
		c := m.spare[k-1]
		m.spare = m.spare[:k-1]
		return c
	}
	if m.owned < 2 {
		m.owned++
		return hashChunks.Get().(*[]byte)
	}
	m.busy--
	return <-m.freed
}

// send hands the full current chunk to the hashing goroutine, starting it first.
func (m *hashPipe) send() {
	if m.work == nil {
		m.work, m.freed = make(chan *[]byte, 2), make(chan *[]byte, 2)
		go hashLoop(m.h, m.work, m.freed)
	}
	m.busy++
	m.work <- m.cur
	m.cur = nil
}

// hashLoop hashes chunks in the order sent and hands each back; it ends when work is
// closed.
func hashLoop(h hash.Hash, work <-chan *[]byte, freed chan<- *[]byte) {
	for c := range work {
		h.Write(*c)
		freed <- c
	}
}

// wait takes back every chunk in flight: after it, m.h has hashed all they held.
func (m *hashPipe) wait() {
	for ; m.busy > 0; m.busy-- {
		m.spare = append(m.spare, <-m.freed)
	}
}

// Sum returns the quoted hex digest of everything written: the ETag.
func (m *hashPipe) Sum() string {
	m.wait()
	if m.cur != nil {
		m.h.Write((*m.cur)[:m.fill])
		m.spare, m.cur = append(m.spare, m.cur), nil
	}
	return `"` + hex.EncodeToString(m.h.Sum(nil)) + `"`
}

// close stops the hashing goroutine and returns the chunks to the pool. Safe to call
// more than once.
func (m *hashPipe) close() {
	if m.stopped {
		return
	}
	m.stopped = true
	m.wait()
	if m.work != nil {
		close(m.work)
	}
	if m.cur != nil {
		m.spare, m.cur = append(m.spare, m.cur), nil
	}
	for _, c := range m.spare {
		hashChunks.Put(c)
	}
	m.spare = nil
	if b, ok := m.h.(*batchedHash); ok {
		b.release()
	}
}

// batchSize is the smallest write batchedHash hands its hash.
const batchSize = 256 << 10

// batchBufs holds batchedHash buffers between uploads.
var batchBufs = sync.Pool{New: func() any { b := make([]byte, 0, batchSize); return &b }}

// batchedHash is a hash.Hash that hands the hash it wraps writes of batchSize bytes
// or more: smaller ones are gathered in a buffer first. Sum hashes what the buffer
// holds; release returns the buffer to the pool.
type batchedHash struct {
	hash.Hash
	buf *[]byte // nil until the first small write
}

// Write implements io.Writer; it never fails.
func (b *batchedHash) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= batchSize && (b.buf == nil || len(*b.buf) == 0) {
		b.Hash.Write(p)
		return n, nil
	}
	if b.buf == nil {
		b.buf = batchBufs.Get().(*[]byte)
	}
	for len(p) > 0 {
		buf := *b.buf
		c := copy(buf[len(buf):cap(buf)], p)
		*b.buf, p = buf[:len(buf)+c], p[c:]
		if len(*b.buf) == batchSize {
			b.Hash.Write(*b.buf)
			*b.buf = (*b.buf)[:0]
		}
	}
	return n, nil
}

// Sum returns the hash of everything written, appended to in.
func (b *batchedHash) Sum(in []byte) []byte {
	if b.buf != nil && len(*b.buf) > 0 {
		b.Hash.Write(*b.buf)
		*b.buf = (*b.buf)[:0]
	}
	return b.Hash.Sum(in)
}

// release returns the buffer to the pool; b is not used after it.
func (b *batchedHash) release() {
	if b.buf != nil {
		*b.buf = (*b.buf)[:0]
		batchBufs.Put(b.buf)
		b.buf = nil
	}
}
