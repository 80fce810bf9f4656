package fsblob

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// directSupported reports whether dir's filesystem takes O_DIRECT writes.
func directSupported(t *testing.T, dir string) bool {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20) // large allocations are page-aligned
	if setDirect(f, true) != nil {
		return false
	}
	_, err = f.Write(buf)
	return err == nil
}

// TestDirectWriter writes sizes around the switch to O_DIRECT through copyFull, as a
// put does, and checks the bytes read back and that large files did go out direct.
func TestDirectWriter(t *testing.T) {
	dir := t.TempDir()
	direct := runtime.GOOS == "linux" && directSupported(t, dir)
	sizes := []int{0, 1, 4095, smallCopyBufSize + 1, directAfter - 1, directAfter,
		directAfter + smallCopyBufSize, directAfter + 3<<20 + 123, 12 << 20}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, size := range sizes {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		f, err := os.Create(filepath.Join(dir, "f"))
		if err != nil {
			t.Fatal(err)
		}
		w := &directWriter{f: f}
		n, err := copyFull(w, io.MultiReader(bytes.NewReader(data[:size/3]), bytes.NewReader(data[size/3:])))
		if err != nil || n != int64(size) {
			t.Fatalf("size %d: copyFull = %d, %v", size, n, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f.Name())
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back %d bytes (err %v), not what was written", size, len(got), err)
		}
		wantDirect := direct && size >= directAfter+smallCopyBufSize+1<<20
		if w.used != wantDirect {
			t.Errorf("size %d: used O_DIRECT = %v, want %v", size, w.used, wantDirect)
		}
	}
	if !direct {
		t.Logf("%s does not take O_DIRECT here: only the buffered path was checked", dir)
	}
}

// TestDirectWriterUnaligned: past the threshold, a write from an unaligned buffer, of
// an unaligned length or at an unaligned offset goes out buffered.
func TestDirectWriterUnaligned(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &directWriter{f: f}
	big := make([]byte, 2<<20)
	for i := range big {
		big[i] = byte(i * 7)
	}
	var want []byte
	for _, p := range [][]byte{big[:directAfter/2], big[:directAfter/2], big[1 : 1+directAlign], big[:directAlign-1], big[:1<<20]} {
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		if w.used {
			t.Fatalf("O_DIRECT used for an unaligned write at offset %d", w.n)
		}
		want = append(want, p...)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (err %v), want %d", len(got), err, len(want))
	}
}
