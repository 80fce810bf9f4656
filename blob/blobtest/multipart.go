package blobtest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// multipartTests check the blob.Multipart contract; drivers without it skip them.
var multipartTests = []test{
	{"MultipartRoundTrip", testMultipartRoundTrip},
	{"MultipartReplacePart", testMultipartReplacePart},
	{"MultipartOrder", testMultipartOrder},
	{"MultipartAbort", testMultipartAbort},
	{"MultipartOtherKey", testMultipartOtherKey},
	{"MultipartUploads", testMultipartUploads},
}

// multipartOf returns d's Multipart capability (the Store's own for a Store), or
// skips the test.
func multipartOf(t *testing.T, d blob.Driver) blob.Multipart {
	t.Helper()
	var m blob.Multipart
	var ok bool
	if st, isStore := d.(*blob.Store); isStore {
		m, ok = st.Multipart()
	} else {
		m, ok = blob.As[blob.Multipart](d)
	}
	if !ok {
		t.Skip("the driver has no blob.Multipart")
	}
	return m
}

func createUpload(t *testing.T, m blob.Multipart, key string) string {
	t.Helper()
	id, err := m.CreateUpload(ctx, key)
	if err != nil || id == "" || len(id) > 1024 {
		t.Fatalf("CreateUpload(%s) = %q, %v", key, id, err)
	}
	return id
}

func putPart(t *testing.T, m blob.Multipart, key, id string, n int, data []byte, size int64) blob.Part {
	t.Helper()
	p, err := m.PutPart(ctx, key, id, n, bytes.NewReader(data), size)
	if err != nil {
		t.Fatalf("PutPart(%s, %d): %v", key, n, err)
	}
	if p.Number != n || p.Size != int64(len(data)) || p.ETag == "" {
		t.Fatalf("PutPart(%s, %d) = %+v", key, n, p)
	}
	return p
}

// checkParts checks that the upload's parts are want, in order.
func checkParts(t *testing.T, m blob.Multipart, key, id string, want ...blob.Part) {
	t.Helper()
	got, err := m.Parts(ctx, key, id)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Parts = %+v, %v; want %+v", got, err, want)
	}
}

// complete completes the upload with parts and checks that key then holds want.
func complete(t *testing.T, d blob.Driver, m blob.Multipart, key, id string, want []byte, parts ...blob.Part) {
	t.Helper()
	a, err := m.Complete(ctx, key, id, parts)
	if err != nil || a.Key != key || a.Size != int64(len(want)) {
		t.Fatalf("Complete(%s) = %+v, %v", key, a, err)
	}
	if !bytes.Equal(read(t, d, key), want) {
		t.Fatalf("%s differs from the parts it was completed with", key)
	}
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	if coffer.ErrorCode(err) != code {
		t.Fatalf("%s = %v, want %s", what, err, code)
	}
}

func testMultipartRoundTrip(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/round")
	mustNotExist(t, d, "mp/round")
	a, b, c := Data(blob.MinPartSize, 21), Data(blob.MinPartSize, 22), Data(1000, 23)
	p1 := putPart(t, m, "mp/round", id, 1, a, int64(len(a)))
	p2 := putPart(t, m, "mp/round", id, 2, b, -1)
	p3 := putPart(t, m, "mp/round", id, 3, c, int64(len(c)))
	checkParts(t, m, "mp/round", id, p1, p2, p3)
	mustNotExist(t, d, "mp/round")
	attrs, err := m.Complete(ctx, "mp/round", id, []blob.Part{p1, p2, p3})
	want := append(append(append([]byte{}, a...), b...), c...)
	if err != nil || attrs.Key != "mp/round" || attrs.Size != int64(len(want)) {
		t.Fatalf("Complete = %+v, %v", attrs, err)
	}
	if !bytes.Equal(read(t, d, "mp/round"), want) {
		t.Fatal("completed blob differs from its parts")
	}
	_, err = m.Parts(ctx, "mp/round", id)
	wantCode(t, "Parts after Complete", err, coffer.ENOTFOUND)
	if _, err = m.Complete(ctx, "mp/round", id, []blob.Part{p1, p2, p3}); err != nil {
		wantCode(t, "Complete twice", err, coffer.ENOTFOUND)
	}
	if !bytes.Equal(read(t, d, "mp/round"), want) {
		t.Fatal("completing twice changed the blob")
	}
}

func testMultipartReplacePart(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/replace")
	first := putPart(t, m, "mp/replace", id, 1, Data(blob.MinPartSize, 31), -1)
	data := Data(blob.MinPartSize, 32)
	p1 := putPart(t, m, "mp/replace", id, 1, data, int64(len(data)))
	if p1.ETag == first.ETag {
		t.Fatalf("a part's ETag %q did not change with its content", p1.ETag)
	}
	_, err := m.PutPart(ctx, "mp/replace", id, 1, bytes.NewReader([]byte("short")), 10)
	if err == nil {
		t.Fatal("PutPart accepted fewer bytes than declared")
	}
	_, err = m.PutPart(ctx, "mp/replace", id, 1, bytes.NewReader(Data(100_000, 33)), 5)
	if err == nil {
		t.Fatal("PutPart accepted more bytes than declared")
	}
	_, err = m.PutPart(ctx, "mp/replace", id, 1, &failingReader{n: 100_000}, -1)
	if err == nil {
		t.Fatal("PutPart succeeded with a failing reader")
	}
	p2 := putPart(t, m, "mp/replace", id, 2, []byte("tail"), 4)
	checkParts(t, m, "mp/replace", id, p1, p2)
	_, err = m.Complete(ctx, "mp/replace", id, []blob.Part{first, p2})
	wantCode(t, "Complete with a replaced part's ETag", err, coffer.EINVALID)
	mustNotExist(t, d, "mp/replace")
	checkParts(t, m, "mp/replace", id, p1, p2)
	complete(t, d, m, "mp/replace", id, append(data, "tail"...), p1, p2)
}

func testMultipartOrder(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/order")
	for _, n := range []int{0, -1, blob.MaxParts + 1} {
		_, err := m.PutPart(ctx, "mp/order", id, n, bytes.NewReader([]byte("x")), 1)
		wantCode(t, fmt.Sprintf("PutPart number %d", n), err, coffer.EINVALID)
	}
	p2 := putPart(t, m, "mp/order", id, 2, []byte("second"), 6)
	data := Data(blob.MinPartSize, 41)
	p1 := putPart(t, m, "mp/order", id, 1, data, int64(len(data)))
	checkParts(t, m, "mp/order", id, p1, p2)
	for name, parts := range map[string][]blob.Part{
		"descending": {p2, p1},
		"missing":    {p1, {Number: 3, Size: 1, ETag: p2.ETag}},
		"repeated":   {p1, p1, p2},
		"none":       {},
	} {
		_, err := m.Complete(ctx, "mp/order", id, parts)
		wantCode(t, "Complete with parts "+name, err, coffer.EINVALID)
	}
	mustNotExist(t, d, "mp/order")
	complete(t, d, m, "mp/order", id, append(data, "second"...), p1, p2)
}

func testMultipartAbort(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/abort")
	p := putPart(t, m, "mp/abort", id, 1, []byte("gone"), 4)
	if err := m.Abort(ctx, "mp/abort", id); err != nil {
		t.Fatal(err)
	}
	_, err := m.Parts(ctx, "mp/abort", id)
	wantCode(t, "Parts after Abort", err, coffer.ENOTFOUND)
	_, err = m.PutPart(ctx, "mp/abort", id, 2, bytes.NewReader([]byte("x")), 1)
	wantCode(t, "PutPart after Abort", err, coffer.ENOTFOUND)
	_, err = m.Complete(ctx, "mp/abort", id, []blob.Part{p})
	wantCode(t, "Complete after Abort", err, coffer.ENOTFOUND)
	mustNotExist(t, d, "mp/abort")
	if err := m.Abort(ctx, "mp/abort", id); err != nil {
		t.Fatalf("second Abort: %v", err)
	}
	if err := m.Abort(ctx, "mp/abort", "no-such-upload"); err != nil {
		t.Fatalf("Abort of an unknown upload: %v", err)
	}
	if ups := uploads(t, m); len(ups) != 0 {
		t.Fatalf("uploads left after Abort: %+v", ups)
	}
}

func testMultipartOtherKey(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/mine")
	p := putPart(t, m, "mp/mine", id, 1, []byte("mine"), 4)
	_, err := m.PutPart(ctx, "mp/other", id, 1, bytes.NewReader([]byte("x")), 1)
	wantCode(t, "PutPart under another key", err, coffer.ENOTFOUND)
	_, err = m.Parts(ctx, "mp/other", id)
	wantCode(t, "Parts under another key", err, coffer.ENOTFOUND)
	_, err = m.Complete(ctx, "mp/other", id, []blob.Part{p})
	wantCode(t, "Complete under another key", err, coffer.ENOTFOUND)
	_, err = m.Parts(ctx, "mp/mine", "no-such-upload")
	wantCode(t, "Parts of an unknown upload", err, coffer.ENOTFOUND)
	mustNotExist(t, d, "mp/other")
	checkParts(t, m, "mp/mine", id, p)
}

func testMultipartUploads(t *testing.T, d blob.Driver) {
	m := multipartOf(t, d)
	a, b := createUpload(t, m, "mp/u/a"), createUpload(t, m, "mp/u/b")
	if a == b {
		t.Fatalf("two uploads share the id %q", a)
	}
	got := uploads(t, m)
	if len(got) != 2 || got[a].Key != "mp/u/a" || got[b].Key != "mp/u/b" || got[a].Created.IsZero() {
		t.Fatalf("Uploads = %+v", got)
	}
}

// uploads returns the uploads in progress by id.
func uploads(t *testing.T, m blob.Multipart) map[string]blob.Upload {
	t.Helper()
	got := map[string]blob.Upload{}
	err := m.Uploads(ctx, func(u blob.Upload) error { got[u.ID] = u; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// testReopenMultipart checks that an upload's parts survive reopening the driver.
func testReopenMultipart(t *testing.T, open func() blob.Driver) {
	d := open()
	m := multipartOf(t, d)
	id := createUpload(t, m, "mp/reopen")
	a := Data(blob.MinPartSize, 51)
	p1 := putPart(t, m, "mp/reopen", id, 1, a, int64(len(a)))
	closeDriver(t, d)

	d = open()
	defer d.Close()
	m = multipartOf(t, d)
	checkParts(t, m, "mp/reopen", id, p1)
	p2 := putPart(t, m, "mp/reopen", id, 2, []byte("end"), 3)
	complete(t, d, m, "mp/reopen", id, append(a, "end"...), p1, p2)
}
