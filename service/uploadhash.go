package service

import (
	"crypto/md5"
	"encoding/hex"
	"hash"
	"sync"
)

// The ETag of an uploaded file is the quoted MD5 of its contents, as hasura-storage's
// (the S3 ETag of a single-part put) and as the API documents it, so MD5 stays. MD5
// runs at well under disk speed on one core (about 1 s/GiB here), so a large upload
// hashes on a goroutine of its own: chunks of the stream are copied aside and hashed
// there while the next ones are read and written to the blob.
const (
	hashChunkSize = 1 << 20   // bytes hashed per hand-off to the hashing goroutine
	hashSyncBytes = 256 << 10 // the first bytes hash inline: small uploads start no goroutine
)

// hashChunks holds the chunks of md5Pipes between uploads.
var hashChunks = sync.Pool{New: func() any { b := make([]byte, hashChunkSize); return &b }}

// md5Pipe is an io.Writer computing the MD5 of what is written to it: inline up to
// hashSyncBytes, then on a goroutine of its own, in chunks, two at most in flight.
// Sum returns the digest; close must always be called (it stops the goroutine and
// returns the chunks to the pool). Not safe for concurrent use.
type md5Pipe struct {
	h       hash.Hash
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

func newMD5Pipe() *md5Pipe { return &md5Pipe{h: md5.New()} }

// Write implements io.Writer; it never fails.
func (m *md5Pipe) Write(p []byte) (int, error) {
	n := len(p)
	if m.work == nil && m.n+int64(n) <= hashSyncBytes {
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
func (m *md5Pipe) take() *[]byte {
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
func (m *md5Pipe) send() {
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
func (m *md5Pipe) wait() {
	for ; m.busy > 0; m.busy-- {
		m.spare = append(m.spare, <-m.freed)
	}
}

// Sum returns the quoted hex MD5 of everything written: the ETag.
func (m *md5Pipe) Sum() string {
	m.wait()
	if m.cur != nil {
		m.h.Write((*m.cur)[:m.fill])
		m.spare, m.cur = append(m.spare, m.cur), nil
	}
	return `"` + hex.EncodeToString(m.h.Sum(nil)) + `"`
}

// close stops the hashing goroutine and returns the chunks to the pool. Safe to call
// more than once.
func (m *md5Pipe) close() {
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
}
