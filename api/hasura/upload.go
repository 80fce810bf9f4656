package hasura

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"sync"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/service"
)

// maxFieldBytes bounds a non-file multipart field (bucket-id, metadata[]).
const maxFieldBytes = coffer.MaxMetadataBytes + 4096

// uploadFiles serves POST /v1/files: multipart with optional "bucket-id" (before the
// files), one or more "file[]" and optional "metadata[]" JSON parts matching the files
// in order. Also the older single "file" form with x-nhost-* headers. All files commit
// together or none does.
func (h *Handler) uploadFiles(w http.ResponseWriter, r *http.Request) {
	mr, release, err := multipartReader(r)
	defer release()
	if err != nil {
		writeUploadError(w, r, coffer.Errorf(coffer.EINVALID, "request must be multipart/form-data: %v", err))
		return
	}
	up := &uploadState{h: h, r: r, bucketID: headerOr(r, "X-Nhost-Bucket-Id", coffer.DefaultBucketID)}
	defer up.abort()
	err = up.readParts(mr)
	if err == nil && up.up == nil {
		err = coffer.Errorf(coffer.EINVALID, "no file in the request (use the multipart field \"file[]\")")
	}
	if err == nil && up.up.Deferred() { // no bucket-id field: the header's, or the default
		err = up.up.SetBucket(r.Context(), up.bucketID)
	}
	if err != nil {
		writeUploadError(w, r, err)
		return
	}
	files, err := up.up.Commit(r.Context())
	if err != nil {
		writeUploadError(w, r, err)
		return
	}
	if up.legacy {
		w.Header().Set("X-Deprecation-Warning-Old-Upload-File-Method", "use file[] and metadata[] fields")
		writeJSON(w, http.StatusCreated, fileJSON(files[0]))
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"processedFiles": filesJSON(files)})
}

// A multipart body is read through a pooled buffer: mime/multipart reads its input in
// 4 KiB pieces, which would be one read(2) each; through bodyBufSize a large upload
// takes a few per MiB. A body known to be under smallBodyMax gets a smallBodyBufSize
// buffer (so many small uploads at once do not each hold 256 KiB), and one under
// minBufferedBody none.
const (
	bodyBufSize      = 256 << 10
	smallBodyBufSize = 32 << 10
	smallBodyMax     = 1 << 20
	minBufferedBody  = 16 << 10
)

// bodyBufs and smallBodyBufs hold body buffers between requests.
var (
	bodyBufs      = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bodyBufSize) }}
	smallBodyBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, smallBodyBufSize) }}
)

// multipartReader returns a reader of r's multipart body, read through a pooled
// buffer. release returns the buffer; call it, even after an error, once the body is
// no longer read.
func multipartReader(r *http.Request) (mr *multipart.Reader, release func(), err error) {
	release = func() {}
	if n := r.ContentLength; n < 0 || n >= minBufferedBody {
		pool := &bodyBufs
		if n >= 0 && n < smallBodyMax {
			pool = &smallBodyBufs
		}
		br := pool.Get().(*bufio.Reader)
		br.Reset(r.Body)
		r.Body = bufferedBody{Reader: br, Closer: r.Body}
		release = func() {
			br.Reset(nil)
			pool.Put(br)
		}
	}
	mr, err = r.MultipartReader()
	return mr, release, err
}

// bufferedBody is a request body read through a buffer, closed as the original.
type bufferedBody struct {
	*bufio.Reader
	io.Closer
}

type uploadState struct {
	h        *Handler
	r        *http.Request
	bucketID string
	named    bool // a bucket-id field was read
	up       *service.Upload
	nMeta    int
	legacy   bool
}

func (u *uploadState) abort() {
	if u.up != nil {
		u.up.Abort(u.r.Context())
	}
}

func (u *uploadState) begin() error {
	if u.up != nil {
		return nil
	}
	var err error
	if u.named || u.legacy { // the bucket is known: its rules apply from the first byte
		u.up, err = u.h.svc.BeginUpload(u.r.Context(), principal(u.r), u.bucketID)
	} else { // files before bucket-id, as the Nhost JS SDK sends them
		u.up, err = u.h.svc.BeginUploadLater(u.r.Context(), principal(u.r))
	}
	return err
}

func (u *uploadState) readParts(mr *multipart.Reader) error { return eachPart(mr, u.readPart) }

// eachPart calls fn with every part of mr in order, closing each after it, and stops
// at the first error (fn's or the reader's); the end of the body is no error.
func eachPart(mr *multipart.Reader, fn func(*multipart.Part) error) error {
	for {
		part, err := nextPart(mr)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = fn(part)
		part.Close()
		if err != nil {
			return err
		}
	}
}

// maxPartHeaderBytes bounds one part's headers (names and values together). Go's
// multipart reader allows up to 10 MiB; a browser or SDK sends a few hundred bytes.
const maxPartHeaderBytes = 16 << 10

// nextPart returns the body's next part, io.EOF after the last, or EINVALID for a
// malformed body or a part whose headers pass maxPartHeaderBytes.
func nextPart(mr *multipart.Reader) (*multipart.Part, error) {
	part, err := mr.NextPart()
	if errors.Is(err, io.EOF) {
		return nil, io.EOF
	}
	if err != nil {
		return nil, coffer.Errorf(coffer.EINVALID, "malformed multipart body: %v", err)
	}
	n := 0
	for k, vs := range part.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	if n > maxPartHeaderBytes {
		part.Close()
		return nil, coffer.Errorf(coffer.EINVALID, "malformed multipart body: a part's headers are longer than %d bytes", maxPartHeaderBytes)
	}
	return part, nil
}

func (u *uploadState) readPart(part *multipart.Part) error {
	switch part.FormName() {
	case "bucket-id":
		if u.named || u.legacy || (u.up != nil && !u.up.Deferred()) {
			return coffer.Errorf(coffer.EINVALID, "bucket-id given twice")
		}
		v, err := readField(part)
		if err != nil {
			return err
		}
		u.bucketID, u.named = v, true
		if u.up != nil {
			return u.up.SetBucket(u.r.Context(), v)
		}
		return nil
	case "metadata[]":
		return u.readMeta(part)
	case "file[]":
		return u.readFile(part)
	case "file":
		return u.readLegacyFile(part)
	}
	return discardField(part)
}

// discardField skips an unknown field (bounded: a huge one is an error).
func discardField(part *multipart.Part) error {
	n, err := io.Copy(io.Discard, io.LimitReader(part, maxFieldBytes+1))
	if err != nil {
		return coffer.Errorf(coffer.EINVALID, "malformed multipart body: %v", err)
	}
	if n > maxFieldBytes {
		return coffer.Errorf(coffer.ETOOLARGE, "field %q is larger than %d bytes", part.FormName(), maxFieldBytes)
	}
	return nil
}

func (u *uploadState) readMeta(part *multipart.Part) error {
	b, err := readField(part)
	if err != nil {
		return err
	}
	var m uploadMetaJSON
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		return coffer.Errorf(coffer.EINVALID, "metadata[] %d is not a JSON object {id?, name?, metadata?}", u.nMeta)
	}
	if err := u.begin(); err != nil {
		return err
	}
	u.nMeta++
	return u.up.SetMeta(u.nMeta-1, m.toMeta())
}

func (u *uploadState) readFile(part *multipart.Part) error {
	if u.legacy {
		return coffer.Errorf(coffer.EINVALID, "do not mix \"file\" and \"file[]\" fields")
	}
	if err := u.begin(); err != nil {
		return err
	}
	return u.up.AddContent(u.r.Context(), part.FileName(), part.Header.Get("Content-Type"), part, -1)
}

// readLegacyFile handles the pre-0.2 hasura-storage form: one "file" field, with the
// file's id and name in x-nhost-file-id and x-nhost-file-name headers.
func (u *uploadState) readLegacyFile(part *multipart.Part) error {
	if u.up != nil {
		return coffer.Errorf(coffer.EINVALID, "the \"file\" field takes one file; use \"file[]\" for several")
	}
	u.legacy = true
	if err := u.begin(); err != nil {
		return err
	}
	if err := u.up.AddContent(u.r.Context(), part.FileName(), part.Header.Get("Content-Type"), part, -1); err != nil {
		return err
	}
	return u.up.SetMeta(0, service.UploadMeta{ID: u.r.Header.Get("X-Nhost-File-Id"), Name: u.r.Header.Get("X-Nhost-File-Name")})
}

func readField(part *multipart.Part) (string, error) {
	b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
	if err != nil {
		return "", coffer.Errorf(coffer.EINVALID, "reading field %q: %v", part.FormName(), err)
	}
	if len(b) > maxFieldBytes {
		return "", coffer.Errorf(coffer.ETOOLARGE, "field %q is larger than %d bytes", part.FormName(), maxFieldBytes)
	}
	return string(b), nil
}

func headerOr(r *http.Request, name, def string) string {
	if v := r.Header.Get(name); v != "" {
		return v
	}
	return def
}
