package openfile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSharedReaders(t *testing.T) {
	body := strings.Repeat("abcdefghij", 100)
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	s, err := New(f, int64(len(body)), 16, func() error { closed++; return f.Close() })
	if err != nil {
		t.Fatal(err)
	}
	if !s.Acquire() || !s.Acquire() {
		t.Fatal("acquire")
	}
	a, b := s.Reader(), s.Reader()
	// a reads across the head held in memory and the file; b seeks on its own.
	got, err := io.ReadAll(io.LimitReader(a, 30))
	if err != nil || string(got) != body[:30] {
		t.Fatalf("a: %q %v", got, err)
	}
	if off, _ := b.Seek(-5, io.SeekEnd); off != int64(len(body))-5 {
		t.Fatalf("seek end: %d", off)
	}
	if rest, _ := io.ReadAll(b); string(rest) != body[len(body)-5:] {
		t.Fatalf("b: %q", rest)
	}
	if _, err := b.Seek(-1, io.SeekStart); err == nil {
		t.Fatal("a negative position was accepted")
	}
	if file, off, advance := a.SendFile(); file != f || off != 30 {
		t.Fatalf("SendFile: %v %d", file == f, off)
	} else if advance(70); a.off != 100 {
		t.Fatalf("advance: %d", a.off)
	}
	a.Close()
	a.Close() // once
	if s.Refs() != 2 {
		t.Fatalf("refs %d, want 2", s.Refs())
	}
	s.DropCacheRef()
	s.DropCacheRef() // once
	if s.Refs() != 1 || closed != 0 {
		t.Fatalf("refs %d, closed %d", s.Refs(), closed)
	}
	b.Close()
	if s.Refs() != 0 || closed != 1 || s.Acquire() {
		t.Fatalf("after the last reader: refs %d, closed %d", s.Refs(), closed)
	}
}
