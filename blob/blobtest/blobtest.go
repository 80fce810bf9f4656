// Package blobtest is the conformance suite every blob.Driver passes, and shared
// benchmarks. A driver is done when Run passes, not when it compiles.
package blobtest

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// Known is a conformance test that a test setup knowingly fails because of the server
// behind the driver, not the driver: Run skips it and logs the reason.
type Known struct{ Test, Reason string }

// test is one conformance test, run on a fresh driver.
type test struct {
	name string
	fn   func(*testing.T, blob.Driver)
}

// tests is the driver contract (blob.go), test by test.
var tests = []test{
	{"RoundTrip", testRoundTrip},
	{"Seek", testSeek},
	{"Missing", testMissing},
	{"Overwrite", testOverwrite},
	{"WrongSize", testWrongSize},
	{"ReaderError", testReaderError},
	{"Cancelled", testCancelled},
	{"Empty", testEmpty},
	{"Large", testLarge},
	{"Delete", testDelete},
	{"List", testList},
	{"Concurrent", testConcurrent},
	{"ConcurrentSiblings", testConcurrentSiblings},
	{"WrapperKeepsCapabilities", testWrapperKeepsCapabilities},
}

// Run runs the conformance suite; newDriver returns a fresh, empty driver. Every test
// runs twice: on the driver itself ("Driver/...") and through the blob.Store wrapper
// the upper layers use ("Store/..."), so the wrapper can hide no driver behaviour.
func Run(t *testing.T, newDriver func(t *testing.T) blob.Driver, known ...Known) {
	for _, via := range viaBoth {
		t.Run(via.name, func(t *testing.T) {
			for _, tc := range append(tests, multipartTests...) {
				t.Run(tc.name, func(t *testing.T) {
					skipKnown(t, tc.name, known)
					d := via.wrap(newDriver(t))
					t.Cleanup(func() { d.Close() })
					tc.fn(t, d)
				})
			}
		})
	}
}

// viaBoth names the two ways every test reaches a driver: as it is, and wrapped.
var viaBoth = []struct {
	name string
	wrap func(blob.Driver) blob.Driver
}{
	{"Driver", func(d blob.Driver) blob.Driver { return d }},
	{"Store", func(d blob.Driver) blob.Driver { return blob.New(d) }},
}

// skipKnown skips test name if the setup knowingly fails it.
func skipKnown(t *testing.T, name string, known []Known) {
	for _, k := range known {
		if k.Test == name {
			t.Skip(k.Reason)
		}
	}
}

var ctx = context.Background()

// Data returns n deterministic pseudo-random bytes.
func Data(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func put(t *testing.T, d blob.Driver, key string, data []byte) {
	t.Helper()
	a, err := d.Put(ctx, key, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Put(%s): %v", key, err)
	}
	if a.Size != int64(len(data)) || a.Key != key {
		t.Fatalf("Put(%s) attrs %+v", key, a)
	}
}

func read(t *testing.T, d blob.Driver, key string) []byte {
	t.Helper()
	r, err := d.Open(ctx, key)
	if err != nil {
		t.Fatalf("Open(%s): %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	if r.Attrs().Size != int64(len(b)) {
		t.Fatalf("Attrs().Size %d, read %d bytes", r.Attrs().Size, len(b))
	}
	return b
}

func mustNotExist(t *testing.T, d blob.Driver, key string) {
	t.Helper()
	if _, err := d.Stat(ctx, key); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		t.Fatalf("Stat(%s) = %v, want ENOTFOUND", key, err)
	}
	if r, err := d.Open(ctx, key); coffer.ErrorCode(err) != coffer.ENOTFOUND {
		if r != nil {
			r.Close()
		}
		t.Fatalf("Open(%s) = %v, want ENOTFOUND", key, err)
	}
}

func testRoundTrip(t *testing.T, d blob.Driver) {
	data := Data(100_000, 1)
	put(t, d, "a/b/c.bin", data)
	if !bytes.Equal(read(t, d, "a/b/c.bin"), data) {
		t.Fatal("content differs")
	}
	a, err := d.Stat(ctx, "a/b/c.bin")
	if err != nil || a.Size != int64(len(data)) || a.ModTime.IsZero() {
		t.Fatalf("Stat: %+v %v", a, err)
	}
}

func testSeek(t *testing.T, d blob.Driver) {
	data := Data(50_000, 2)
	put(t, d, "seek", data)
	r, err := d.Open(ctx, "seek")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if end, err := r.Seek(0, io.SeekEnd); err != nil || end != int64(len(data)) {
		t.Fatalf("Seek end = %d, %v", end, err)
	}
	if _, err := r.Seek(1234, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if _, err := io.ReadFull(r, buf); err != nil || !bytes.Equal(buf, data[1234:1334]) {
		t.Fatalf("read after seek: %v", err)
	}
	if _, err := r.Seek(-10, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	if rest, _ := io.ReadAll(r); !bytes.Equal(rest, data[len(data)-10:]) {
		t.Fatal("tail after seek from end differs")
	}
}

func testMissing(t *testing.T, d blob.Driver) {
	mustNotExist(t, d, "nope/nothing")
}

func testOverwrite(t *testing.T, d blob.Driver) {
	put(t, d, "k", []byte("first version"))
	put(t, d, "k", []byte("second"))
	if got := read(t, d, "k"); string(got) != "second" {
		t.Fatalf("got %q", got)
	}
}

func testWrongSize(t *testing.T, d blob.Driver) {
	if _, err := d.Put(ctx, "short", bytes.NewReader([]byte("abc")), 10); err == nil {
		t.Fatal("Put accepted fewer bytes than declared")
	}
	mustNotExist(t, d, "short")
	if _, err := d.Put(ctx, "long", bytes.NewReader([]byte("abcdefghijkl")), 5); err == nil {
		t.Fatal("Put accepted more bytes than declared")
	}
	mustNotExist(t, d, "long")
	put(t, d, "keep", []byte("old"))
	if _, err := d.Put(ctx, "keep", bytes.NewReader([]byte("x")), 3); err == nil {
		t.Fatal("Put accepted a short overwrite")
	}
	if got := read(t, d, "keep"); string(got) != "old" {
		t.Fatalf("failed overwrite changed the blob to %q", got)
	}
}

// failingReader yields n bytes, then fails.
type failingReader struct{ n int }

var errBoom = errors.New("boom")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errBoom
	}
	if len(p) > f.n {
		p = p[:f.n]
	}
	for i := range p {
		p[i] = 'x'
	}
	f.n -= len(p)
	return len(p), nil
}

func testReaderError(t *testing.T, d blob.Driver) {
	for _, size := range []int64{-1, 1 << 20} {
		key := fmt.Sprintf("fail%d", size)
		if _, err := d.Put(ctx, key, &failingReader{n: 300_000}, size); err == nil {
			t.Fatalf("size %d: Put succeeded with a failing reader", size)
		}
		mustNotExist(t, d, key)
	}
}

func testCancelled(t *testing.T, d blob.Driver) {
	c, cancel := context.WithCancel(ctx)
	r := &cancelAfter{r: bytes.NewReader(Data(1<<20, 3)), after: 100_000, cancel: cancel}
	if _, err := d.Put(c, "cancelled", r, -1); err == nil {
		t.Fatal("Put succeeded after cancellation")
	}
	mustNotExist(t, d, "cancelled")
}

type cancelAfter struct {
	r      io.Reader
	n      int
	after  int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n >= c.after {
		c.cancel()
	}
	if len(p) > 8192 {
		p = p[:8192]
	}
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func testEmpty(t *testing.T, d blob.Driver) {
	put(t, d, "empty", nil)
	if got := read(t, d, "empty"); len(got) != 0 {
		t.Fatalf("empty blob read %d bytes", len(got))
	}
	if _, err := d.Put(ctx, "empty2", bytes.NewReader(nil), -1); err != nil {
		t.Fatal(err)
	}
	if a, err := d.Stat(ctx, "empty2"); err != nil || a.Size != 0 {
		t.Fatalf("empty2: %+v %v", a, err)
	}
}

func testLarge(t *testing.T, d blob.Driver) {
	const size = 20 << 20
	for _, declared := range []int64{size, -1} {
		key := fmt.Sprintf("large%d", declared)
		src := io.LimitReader(&repeatReader{b: Data(4093, 5)}, size)
		a, err := d.Put(ctx, key, src, declared)
		if err != nil || a.Size != size {
			t.Fatalf("Put large (declared %d): %+v %v", declared, a, err)
		}
		want := md5.New()
		io.Copy(want, io.LimitReader(&repeatReader{b: Data(4093, 5)}, size))
		r, err := d.Open(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		got := md5.New()
		n, err := io.Copy(got, r)
		r.Close()
		if err != nil || n != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
			t.Fatalf("large read: %d bytes, %v, md5 match %v", n, err, bytes.Equal(got.Sum(nil), want.Sum(nil)))
		}
	}
}

type repeatReader struct {
	b   []byte
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], r.b[r.off:])
		n += c
		r.off = (r.off + c) % len(r.b)
	}
	return n, nil
}

func testDelete(t *testing.T, d blob.Driver) {
	put(t, d, "x/y/z", []byte("z"))
	put(t, d, "x/y2", []byte("y2"))
	if err := d.Delete(ctx, "x/y/z"); err != nil {
		t.Fatal(err)
	}
	mustNotExist(t, d, "x/y/z")
	if err := d.Delete(ctx, "x/y/z"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := d.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("Delete of a missing key: %v", err)
	}
	if string(read(t, d, "x/y2")) != "y2" {
		t.Fatal("sibling lost")
	}
}

func list(t *testing.T, d blob.Driver, prefix string) []string {
	t.Helper()
	var keys []string
	if err := d.List(ctx, prefix, func(a blob.Attrs) error { keys = append(keys, a.Key); return nil }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

func testList(t *testing.T, d blob.Driver) {
	if got := list(t, d, ""); len(got) != 0 {
		t.Fatalf("empty driver lists %v", got)
	}
	for _, k := range []string{"ab/cd/ef", "ab/cd/eg", "ab/x", "abc", "zz"} {
		put(t, d, k, []byte(k))
	}
	cases := map[string]string{"": "ab/cd/ef ab/cd/eg ab/x abc zz", "ab/": "ab/cd/ef ab/cd/eg ab/x", "ab/cd/": "ab/cd/ef ab/cd/eg", "ab": "ab/cd/ef ab/cd/eg ab/x abc", "q": ""}
	for prefix, want := range cases {
		if got := fmt.Sprint(list(t, d, prefix)); got != "["+want+"]" {
			t.Errorf("List(%q) = %s, want [%s]", prefix, got, want)
		}
	}
	stop := errors.New("stop")
	n := 0
	err := d.List(ctx, "", func(blob.Attrs) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Fatalf("List did not stop at the callback's error: %v after %d", err, n)
	}
}

func testConcurrent(t *testing.T, d blob.Driver) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			data := Data(10_000+i, byte(i))
			if _, err := d.Put(ctx, fmt.Sprintf("c/%d", i), bytes.NewReader(data), int64(len(data))); err != nil {
				errs <- err
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 0; i < 16; i++ {
		if !bytes.Equal(read(t, d, fmt.Sprintf("c/%d", i)), Data(10_000+i, byte(i))) {
			t.Fatalf("c/%d differs", i)
		}
	}
}

// Bench runs the shared driver benchmarks.
func Bench(b *testing.B, newDriver func(b *testing.B) blob.Driver) {
	data := Data(100<<10, 9)
	b.Run("Put100KB", func(b *testing.B) {
		d := newDriver(b)
		b.SetBytes(int64(len(data)))
		for i := 0; i < b.N; i++ {
			if _, err := d.Put(ctx, fmt.Sprintf("b/%d", i%64), bytes.NewReader(data), int64(len(data))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Open100KB", func(b *testing.B) {
		d := newDriver(b)
		d.Put(ctx, "b/read", bytes.NewReader(data), int64(len(data)))
		b.SetBytes(int64(len(data)))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := d.Open(ctx, "b/read")
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, r)
			r.Close()
		}
	})
}

// testConcurrentSiblings puts and deletes keys that share a parent from several
// goroutines at once: a driver that makes and removes directories must not trip over
// its own siblings (each delete may empty the parent another put is about to use).
func testConcurrentSiblings(t *testing.T, d blob.Driver) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				key := fmt.Sprintf("siblings/%02x/%d-%d", i%2, g, i)
				if _, err := d.Put(ctx, key, bytes.NewReader([]byte(key)), int64(len(key))); err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
					return
				}
				if err := d.Delete(ctx, key); err != nil {
					errs <- fmt.Errorf("delete %s: %w", key, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// testWrapperKeepsCapabilities checks that the reader capabilities of a driver's readers
// (OSFiler: sendfile) are still found with blob.As through the Store's reader, and
// that the Store offers the driver's Multipart capability, and only when it has one.
func testWrapperKeepsCapabilities(t *testing.T, d blob.Driver) {
	st := blob.New(d)
	put(t, st, "caps", []byte("capabilities"))
	raw, err := st.Driver().Open(ctx, "caps")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	wrapped, err := st.Open(ctx, "caps")
	if err != nil {
		t.Fatal(err)
	}
	defer wrapped.Close()
	_, rawOK := blob.As[blob.OSFiler](raw)
	_, wrappedOK := blob.As[blob.OSFiler](wrapped)
	if rawOK != wrappedOK {
		t.Errorf("OSFiler: the driver's reader %v, through the Store %v", rawOK, wrappedOK)
	}
	_, rawOK = blob.As[blob.Multipart](st.Driver())
	if _, wrappedOK = st.Multipart(); rawOK != wrappedOK {
		t.Errorf("Multipart: the driver %v, through the Store %v", rawOK, wrappedOK)
	}
}
