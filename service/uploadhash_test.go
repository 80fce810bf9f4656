package service

import (
	"crypto/md5"
	"encoding/hex"
	"math/rand/v2"
	"testing"
)

// TestMD5Pipe checks md5Pipe's digest against crypto/md5 for sizes around its inline
// limit and chunk size, written in pieces of many sizes, and that close stops it
// whether or not Sum was called.
func TestMD5Pipe(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, hashSyncBytes, hashSyncBytes + 1, hashChunkSize, hashSyncBytes + hashChunkSize,
		hashSyncBytes + 2*hashChunkSize + 7, 5*hashChunkSize + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		want := md5.Sum(data)
		for _, piece := range []int{1 << 12, 1<<20 + 13, 999} {
			m := newMD5Pipe()
			for p := data; len(p) > 0; {
				k := min(len(p), 1+rng.IntN(piece))
				m.Write(p[:k])
				p = p[k:]
			}
			if got := m.Sum(); got != `"`+hex.EncodeToString(want[:])+`"` {
				t.Errorf("size %d pieces <= %d: %s, want %x", size, piece, got, want)
			}
			m.close()
			m.close()
		}
		m := newMD5Pipe() // abandoned mid-stream
		m.Write(data)
		m.close()
	}
}
