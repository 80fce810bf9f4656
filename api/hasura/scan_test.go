package hasura_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/api/hasura"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
	"github.com/coffer/coffer/webhook/payload"
)

const scanRules = `{"rules":[{"role":"user","buckets":["default"],
  "upload":{"presets":{"uploaded_by_user_id":"X-Hasura-User-Id"}},
  "read":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}},
  "replace":{"filter":{"uploaded_by_user_id":{"_eq":"X-Hasura-User-Id"}}}}]}`

var wantVirus = "virus found: " + clamdtest.Signature

// assertNothingStored checks that the blob store holds exactly blobs blobs and no upload
// intent is left, and that the metadata has exactly files files.
func (e *env) assertNothingStored(t *testing.T, files, blobs int) {
	t.Helper()
	nb := 0
	if err := e.blobs.List(context.Background(), "", func(blob.Attrs) error { nb++; return nil }); err != nil {
		t.Fatal(err)
	}
	nf := 0
	if err := e.db.EachFile(context.Background(), func(*coffer.File) error { nf++; return nil }); err != nil {
		t.Fatal(err)
	}
	intents, err := e.db.StaleIntents(context.Background(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if nb != blobs || nf != files || len(intents) != 0 {
		t.Fatalf("stored %d blobs, %d file rows, %d intents; want %d, %d, 0", nb, nf, len(intents), blobs, files)
	}
}

func (e *env) rejections(t *testing.T) []hasura.Rejection {
	t.Helper()
	var out struct{ Rejections []hasura.Rejection }
	mustStatus(t, e.do("GET", "/v1/ops/virus-rejections", nil, true), http.StatusOK, &out)
	return out.Rejections
}

func TestVirusScanUploadAndReplace(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{})
	e := newEnv(t, envOptions{clamd: d.Addr, webhooks: true, jwtSecret: jwtConfig, rules: scanRules})
	rcv := &hookReceiver{}
	hooks := httptest.NewServer(rcv)
	t.Cleanup(hooks.Close)
	var sub hasura.Subscription
	mustStatus(t, e.do("POST", "/v1/webhooks", strings.NewReader(`{"url":"`+hooks.URL+`","events":["file.rejected"]}`), true), http.StatusCreated, &sub)
	rcv.mu.Lock()
	rcv.secret = sub.Secret
	rcv.mu.Unlock()
	user := []string{"Authorization", "Bearer " + token(t, "user", "u-42")}

	// A clean file is stored; a user's upload with the metadata first is refused
	// with hasura-storage's message, and so is a batch holding one infected file.
	clean := e.uploadOne("default", "clean.txt", []byte("hello, clean world"))
	e.assertNothingStored(t, 1, 1)
	givenID := coffer.NewFileID()
	body, ctype := multipartBody(part{field: "bucket-id", body: []byte("default")},
		part{field: "metadata[]", body: []byte(`{"id":"` + givenID + `","name":"docs/eicar.com"}`)},
		part{field: "file[]", filename: "upload.bin", body: []byte(clamdtest.EICAR)})
	// hasura-storage's body: the file's name and the signature in data; an upload's
	// 403 has no X-Error.
	resp := e.doAs("POST", "/v1/files", body, user, "Content-Type", ctype)
	raw := mustStatus(t, resp, http.StatusForbidden, nil)
	if want := `{"error":{"data":{"file":"docs/eicar.com","virus":"` + clamdtest.Signature + `"},"message":"` + wantVirus + `"},"processedFiles":[]}` + "\n"; string(raw) != want {
		t.Fatalf("upload answered %s, want %s", raw, want)
	}
	if v, ok := resp.Header["X-Error"]; ok {
		t.Fatalf("upload 403 with X-Error %q", v)
	}
	mustError(t, e.do("GET", "/v1/files/"+givenID, nil, true), http.StatusNotFound)
	resp = e.upload(true, part{field: "bucket-id", body: []byte("default")},
		part{field: "file[]", filename: "ok.txt", body: []byte("fine")},
		part{field: "file[]", filename: "second.com", body: []byte(clamdtest.EICAR)})
	if msg := mustError(t, resp, http.StatusForbidden); msg != wantVirus {
		t.Fatalf("batch: message %q", msg)
	}
	// The older single-file form.
	resp = e.do("POST", "/v1/files", bytes.NewReader(mpSingle(t, "file", "legacy.com")), true,
		"Content-Type", "multipart/form-data; boundary=B", "X-Nhost-Bucket-Id", "default")
	if msg := mustError(t, resp, http.StatusForbidden); msg != wantVirus {
		t.Fatalf("legacy form: message %q", msg)
	}
	e.assertNothingStored(t, 1, 1)

	// Replacing with EICAR is refused and keeps the old contents.
	body, ctype = multipartBody(part{field: "file", filename: "x.com", body: []byte(clamdtest.EICAR)})
	resp = e.do("PUT", "/v1/files/"+clean.ID, body, true, "Content-Type", ctype)
	raw = mustStatus(t, resp, http.StatusForbidden, nil)
	if want := `{"error":{"data":{"file":"clean.txt","virus":"` + clamdtest.Signature + `"},"message":"` + wantVirus + `"}}` + "\n"; string(raw) != want {
		t.Fatalf("replace answered %s, want %s", raw, want)
	}
	if resp.Header.Get("X-Error") != wantVirus {
		t.Fatalf("replace: X-Error %q", resp.Header.Get("X-Error"))
	}
	if got := mustStatus(t, e.do("GET", "/v1/files/"+clean.ID, nil, true), http.StatusOK, nil); string(got) != "hello, clean world" {
		t.Fatalf("after a refused replace the file reads %q", got)
	}
	e.assertNothingStored(t, 1, 1)

	// Each refusal is recorded, newest first, for admins only.
	mustError(t, e.doAs("GET", "/v1/ops/virus-rejections", nil, user), http.StatusForbidden)
	mustError(t, e.do("GET", "/v1/ops/virus-rejections?limit=0", nil, true), http.StatusBadRequest)
	recs := e.rejections(t)
	if len(recs) != 4 {
		t.Fatalf("%d rejections recorded, want 4: %+v", len(recs), recs)
	}
	want := []hasura.Rejection{
		{BucketID: "default", Name: "clean.txt", FileID: clean.ID, Role: "admin"},
		{BucketID: "default", Name: "legacy.com", Role: "admin"},
		{BucketID: "default", Name: "second.com", Role: "admin"},
		{BucketID: "default", Name: "docs/eicar.com", FileID: givenID, Role: "user", UserID: "u-42"},
	}
	for i, r := range recs {
		w := want[i]
		w.ID, w.Time, w.Signature, w.Size = r.ID, r.Time, clamdtest.Signature, int64(len(clamdtest.EICAR))
		if r != w || r.ID == "" || time.Since(r.Time) > time.Minute {
			t.Errorf("rejection %d: %+v, want %+v", i, r, w)
		}
	}
	var two struct{ Rejections []hasura.Rejection }
	mustStatus(t, e.do("GET", "/v1/ops/virus-rejections?limit=2", nil, true), http.StatusOK, &two)
	if len(two.Rejections) != 2 || two.Rejections[0].ID != recs[0].ID {
		t.Fatalf("limit=2: %+v", two.Rejections)
	}

	// And sent as file.rejected events carrying the record.
	waitUntil(t, "4 file.rejected events", func() bool { return len(rcv.types()) >= 4 })
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	for _, ev := range rcv.events {
		if ev.Type != coffer.FileRejected || ev.Rejection == nil || ev.File != nil || ev.Rejection.Signature != clamdtest.Signature {
			t.Fatalf("event %+v", ev)
		}
		if ev.Rejection.Name == "docs/eicar.com" && (ev.Actor != payload.Actor{Role: "user", UserID: "u-42"}) {
			t.Fatalf("actor %+v", ev.Actor)
		}
	}
}

// mpSingle is a one-part multipart body (boundary "B") holding EICAR.
func mpSingle(t *testing.T, field, filename string) []byte {
	return []byte("--B\r\nContent-Disposition: form-data; name=\"" + field + "\"; filename=\"" + filename +
		"\"\r\n\r\n" + clamdtest.EICAR + "\r\n--B--\r\n")
}

func TestVirusScannerDown(t *testing.T) {
	down := clamdtest.FreeAddr(t)
	e := newEnv(t, envOptions{clamd: down})
	resp := e.upload(true, part{field: "bucket-id", body: []byte("default")}, part{field: "file[]", filename: "a.txt", body: []byte("hi")})
	if msg := mustError(t, resp, http.StatusServiceUnavailable); msg != "virus scanner unavailable" {
		t.Fatalf("message %q", msg)
	}
	e.assertNothingStored(t, 0, 0)

	// Fail open: stored unscanned.
	e = newEnv(t, envOptions{clamd: down, failOpen: true})
	f := e.uploadOne("default", "a.txt", []byte("stored anyway"))
	e.assertNothingStored(t, 1, 1)

	// A replace while clamd is down keeps the old contents.
	d := clamdtest.Start(t, clamdtest.Options{})
	e = newEnv(t, envOptions{clamd: d.Addr})
	f = e.uploadOne("default", "a.txt", []byte("old"))
	d.Stop()
	body, ctype := multipartBody(part{field: "file", filename: "a.txt", body: []byte("new")})
	mustError(t, e.do("PUT", "/v1/files/"+f.ID, body, true, "Content-Type", ctype), http.StatusServiceUnavailable)
	if got := mustStatus(t, e.do("GET", "/v1/files/"+f.ID, nil, true), http.StatusOK, nil); string(got) != "old" {
		t.Fatalf("file reads %q", got)
	}
	e.assertNothingStored(t, 1, 1)
	if recs := e.rejections(t); len(recs) != 0 {
		t.Fatalf("rejections recorded while clamd was down: %+v", recs)
	}
}

// A large clean upload streams through clamd intact; one beyond clamd's
// StreamMaxLength is refused with 413 (stored with fail open).
func TestVirusScanLargeAndLimit(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{StreamMaxLength: "4M"})
	data := content(3 << 20)
	for _, failOpen := range []bool{false, true} {
		e := newEnv(t, envOptions{clamd: d.Addr, failOpen: failOpen})
		f := e.uploadOne("default", "big.bin", data)
		sum := md5.Sum(data)
		if f.ETag != `"`+hex.EncodeToString(sum[:])+`"` || f.Size != int64(len(data)) {
			t.Fatalf("stored %+v", f)
		}
		resp := e.upload(true, part{field: "bucket-id", body: []byte("default")},
			part{field: "file[]", filename: "huge.bin", body: content(6 << 20)})
		if failOpen {
			mustStatus(t, resp, http.StatusCreated, nil)
			e.assertNothingStored(t, 2, 2)
			continue
		}
		mustError(t, resp, http.StatusRequestEntityTooLarge)
		e.assertNothingStored(t, 1, 1)
	}
}

// The Nhost JS SDK's order (file[] before bucket-id): the infected part is refused as
// it arrives, before the bucket is named; nothing is stored. The record's bucket is
// empty, as no bucket had been named yet.
func TestVirusScanBeforeBucketID(t *testing.T) {
	d := clamdtest.Start(t, clamdtest.Options{})
	e := newEnv(t, envOptions{clamd: d.Addr})
	body, ctype := multipartBody(part{field: "file[]", filename: "eicar.com", body: []byte(clamdtest.EICAR)},
		part{field: "bucket-id", body: []byte("default")})
	if msg := mustError(t, e.do("POST", "/v1/files", body, true, "Content-Type", ctype), http.StatusForbidden); msg != wantVirus {
		t.Fatalf("message %q, want %q", msg, wantVirus)
	}
	e.assertNothingStored(t, 0, 0)
	if recs := e.rejections(t); len(recs) != 1 || recs[0].Name != "eicar.com" || recs[0].BucketID != "" {
		t.Fatalf("rejections %+v", recs)
	}
}

// A clamd that says "stream: OK" as soon as a stream starts, before it has read the
// upload (a broken or hostile scanner): that answer is to no upload, so the upload
// is refused as with a scanner down, and nothing is stored.
func TestVirusScannerEarlyOK(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go earlyOK(conn)
		}
	}()
	e := newEnv(t, envOptions{clamd: ln.Addr().String()})
	resp := e.upload(true, part{field: "bucket-id", body: []byte("default")}, part{field: "file[]", filename: "a.bin", body: content(4 << 20)})
	if msg := mustError(t, resp, http.StatusServiceUnavailable); msg != "virus scanner unavailable" {
		t.Fatalf("message %q", msg)
	}
	e.assertNothingStored(t, 0, 0)
}

// earlyOK answers PING, and INSTREAM with "stream: OK" at once; it reads the stream
// to its end and says nothing more.
func earlyOK(conn net.Conn) {
	defer conn.Close()
	cmd := make([]byte, len("zPING\x00"))
	if _, err := io.ReadFull(conn, cmd); err != nil {
		return
	}
	if string(cmd) == "zPING\x00" {
		conn.Write([]byte("PONG\x00"))
		return
	}
	io.ReadFull(conn, make([]byte, len("zINSTREAM\x00")-len(cmd)))
	conn.Write([]byte("stream: OK\x00"))
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(conn, hdr[:]); err != nil || binary.BigEndian.Uint32(hdr[:]) == 0 {
			return
		}
		io.CopyN(io.Discard, conn, int64(binary.BigEndian.Uint32(hdr[:])))
	}
}
