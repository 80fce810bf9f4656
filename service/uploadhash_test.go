package service

import (
	"crypto/md5"
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
)

// TestHashPipe checks hashPipe's digests against crypto/md5 and BLAKE3 for sizes
// around the inline limit and chunk size, written in pieces of many sizes, and that
// close stops it whether or not Sum was called.
func TestHashPipe(t *testing.T) {
	sums := map[string]func([]byte) []byte{
		ETagMD5:    func(b []byte) []byte { s := md5.Sum(b); return s[:] },
		ETagBLAKE3: func(b []byte) []byte { s := blake3.Sum256(b); return s[:] },
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, hashSyncBytes, hashSyncBytes + 1, hashChunkSize, hashSyncBytes + hashChunkSize,
		hashSyncBytes + 2*hashChunkSize + 7, 5*hashChunkSize + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		for kind, sum := range sums {
			want := `"` + hex.EncodeToString(sum(data)) + `"`
			for _, piece := range []int{1 << 12, 1<<20 + 13, 999} {
				m := newHashPipe(kind)
				for p := data; len(p) > 0; {
					k := min(len(p), 1+rng.IntN(piece))
					m.Write(p[:k])
					p = p[k:]
				}
				if got := m.Sum(); got != want {
					t.Errorf("%s size %d pieces <= %d: %s, want %s", kind, size, piece, got, want)
				}
				m.close()
				m.close()
			}
			m := newHashPipe(kind) // abandoned mid-stream
			m.Write(data)
			m.close()
		}
	}
}

// TestHashPipeBLAKE3Vector pins the BLAKE3 ETag to the published digest of the
// empty input (the BLAKE3 test vectors), so the ETag is what `b3sum` prints.
func TestHashPipeBLAKE3Vector(t *testing.T) {
	m := newHashPipe(ETagBLAKE3)
	defer m.close()
	if got, want := m.Sum(), `"af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"`; got != want {
		t.Fatalf("BLAKE3 of nothing = %s, want %s", got, want)
	}
}
