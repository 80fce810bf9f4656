package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// memFixtureMax is the largest fixture an upload run generates once and holds in
// memory; a larger one is generated again while each upload sends it.
const memFixtureMax = 1 << 20

// uploadForm is the multipart form of a run's uploads, built once per run and shared
// (read only) by its workers: bucket-id first, then one file[] part holding the
// fixture, under a file name of each upload's own. Every upload sends the same content,
// the fixture's (as wrk sends one body): generating it per request cost the generator
// more CPU than the rest of the request.
type uploadForm struct {
	boundary string
	bucket   string
	fixture  Fixture
	block    []byte // the fixture's pattern block; nil for the JPEG
	content  []byte // the whole content when it is at most memFixtureMax bytes
	tail     []byte // the form's end, after the content
}

// newUploadForm prepares the form uploading f into bucket.
func newUploadForm(bucket string, f Fixture) *uploadForm {
	u := &uploadForm{boundary: randomHex(30), bucket: bucket, fixture: f}
	u.tail = []byte("\r\n--" + u.boundary + "--\r\n")
	if f.jpeg {
		return u
	}
	u.block = patternBlockOf(f.Name)
	if f.Size <= memFixtureMax {
		content := make([]byte, f.Size)
		_, _ = io.ReadFull(&patternReader{block: u.block, size: f.Size}, content) // in memory: cannot fail
		u.content = content
	}
	return u
}

// contentType is the request's Content-Type.
func (u *uploadForm) contentType() string { return "multipart/form-data; boundary=" + u.boundary }

// appendHead appends the form up to the file's content to dst, as mime/multipart
// writes it: the bucket-id field, then the file[] part's headers for file name.
func (u *uploadForm) appendHead(dst []byte, name string) []byte {
	dst = append(dst, "--"...)
	dst = append(dst, u.boundary...)
	dst = append(dst, "\r\nContent-Disposition: form-data; name=\"bucket-id\"\r\n\r\n"...)
	dst = append(dst, u.bucket...)
	dst = append(dst, "\r\n--"...)
	dst = append(dst, u.boundary...)
	dst = append(dst, "\r\nContent-Disposition: form-data; name=\"file[]\"; filename="...)
	dst = strconv.AppendQuote(dst, name)
	dst = append(dst, "\r\nContent-Type: "...)
	dst = append(dst, u.fixture.ContentType...)
	return append(dst, "\r\n\r\n"...)
}

// size is the length of a form whose head is head bytes long; -1 when the fixture's
// size is unknown (the JPEG).
func (u *uploadForm) size(head int) int64 {
	if u.fixture.Size < 0 {
		return -1
	}
	return int64(head) + u.fixture.Size + int64(len(u.tail))
}

// open returns a reader of the fixture's content.
func (u *uploadForm) open() io.ReadCloser {
	switch {
	case u.content != nil:
		return io.NopCloser(bytes.NewReader(u.content))
	case u.block != nil:
		return io.NopCloser(&patternReader{block: u.block, size: u.fixture.Size})
	}
	return u.fixture.Open()
}

// uploadName is the file name of worker w's next upload (unique in the run).
func uploadName(dst []byte, w *workerState, f Fixture) []byte {
	w.seq++
	dst = append(dst, "bench-upload-"...)
	dst = strconv.AppendInt(dst, int64(w.id), 10)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, int64(w.seq), 10)
	dst = append(dst, '-')
	return append(dst, f.Name...)
}

// uploadAnswer is the part of a POST /v1/files answer an upload run reads.
type uploadAnswer struct {
	ProcessedFiles []struct {
		ID string `json:"id"`
	} `json:"processedFiles"`
}

// finishUpload completes o, an upload's outcome whose status is known, from the
// answer's body (nil if it could not be read whole): the payload bytes sent, and the
// new file's id recorded in created; an answer naming no single file is an error.
func finishUpload(o *outcome, answer []byte, f Fixture, created *idList) {
	if o.kind != kindOK {
		return
	}
	o.bytes = max(f.Size, 0) // payload bytes, without the multipart framing
	var out uploadAnswer
	if answer == nil || json.Unmarshal(answer, &out) != nil || len(out.ProcessedFiles) != 1 {
		o.kind = kindOther
		return
	}
	created.add(out.ProcessedFiles[0].ID)
}

// upload POSTs a multipart upload through net/http (the std client, or https) and
// records the new file's id in created. The worker goes on to its next upload at
// once: the files are deleted after the run (endpointRun.deleteUploads), so no DELETE
// is timed into an upload or takes a worker's time while the run is measured.
type upload struct {
	api     *apiClient
	form    *uploadForm
	created *idList
}

func (u *upload) do(ctx context.Context, w *workerState, start time.Time) outcome {
	head := u.form.appendHead(nil, string(uploadName(nil, w, u.form.fixture)))
	content := u.form.open()
	defer content.Close()
	body := io.MultiReader(bytes.NewReader(head), content, bytes.NewReader(u.form.tail))
	resp, err := u.api.send(ctx, http.MethodPost, "/v1/files", body, u.form.contentType(), u.form.size(len(head)))
	if err != nil {
		return outcome{kind: classify(err), latency: time.Since(start)}
	}
	o := outcome{status: resp.StatusCode, kind: statusKind(resp.StatusCode), ttfb: max(time.Since(start), 1)}
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	o.latency = max(time.Since(start), 1)
	if err != nil {
		answer = nil
	}
	finishUpload(&o, answer, u.form.fixture, u.created)
	return o
}

// idList is a list of file ids safe for concurrent use.
type idList struct {
	mu  sync.Mutex
	ids []string
}

func (l *idList) add(id string) {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
}

// take returns the ids and empties the list.
func (l *idList) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.ids
	l.ids = nil
	return ids
}

// multipartBody streams an upload form of f under file name name into bucket; size is
// the body's length, or -1 when unknown.
func multipartBody(bucket, name string, f Fixture) (io.ReadCloser, string, int64) {
	form := &uploadForm{boundary: randomHex(30), bucket: bucket, fixture: f}
	form.tail = []byte("\r\n--" + form.boundary + "--\r\n")
	head := form.appendHead(nil, name)
	content := f.Open()
	r := io.MultiReader(bytes.NewReader(head), content, bytes.NewReader(form.tail))
	return readCloser{Reader: r, Closer: content}, form.contentType(), form.size(len(head))
}

type readCloser struct {
	io.Reader
	io.Closer
}

// rawUpload is upload over a rawConn (the fast client, plain http): the request line
// and headers prebuilt, the head, content and tail of a held fixture sent in one
// writev, the answer read into the worker's buffer.
type rawUpload struct {
	rawConn
	form    *uploadForm
	created *idList
	prefix  []byte // request line and headers up to Content-Length's value
	req     []byte // the request being sent: prefix, length, the form's head
	head    []byte // the form's head
	name    []byte // the file name
	copyBuf []byte // for a streamed fixture
}

// newRawUpload prepares POST /v1/files on the server at base (http://host:port); the
// form's fixture must have a known size.
func newRawUpload(ctx context.Context, base string, cred credentials, timeout time.Duration, form *uploadForm, created *idList) (*rawUpload, error) {
	if form.fixture.Size < 0 {
		return nil, fmt.Errorf("raw client: %s has no known size", form.fixture.Name)
	}
	g, err := newRawGet(ctx, base+"/v1/files", cred, timeout)
	if err != nil {
		return nil, err
	}
	// newRawGet's request, as a POST with the form's headers and no final blank line
	req := bytes.TrimSuffix(g.req, []byte("\r\n"))
	req = append([]byte("POST"), bytes.TrimPrefix(req, []byte("GET"))...)
	req = append(req, "Content-Type: "+form.contentType()+"\r\nContent-Length: "...)
	return &rawUpload{rawConn: g.rawConn, form: form, created: created, prefix: req}, nil
}

func (u *rawUpload) do(_ context.Context, w *workerState, start time.Time) outcome {
	u.name = uploadName(u.name[:0], w, u.form.fixture)
	u.head = u.form.appendHead(u.head[:0], string(u.name))
	req := append(u.req[:0], u.prefix...)
	req = strconv.AppendInt(req, u.form.size(len(u.head)), 10)
	u.req = append(append(req, "\r\n\r\n"...), u.head...)
	o, retry := u.try(w, start)
	if retry {
		o, _ = u.try(w, start)
	}
	return o
}

// try sends the request once (see rawGet.try).
func (u *rawUpload) try(w *workerState, start time.Time) (o outcome, retry bool) {
	status, body, retry, err := u.exchange(u.send)
	if err != nil {
		return outcome{kind: classify(err), latency: time.Since(start)}, retry
	}
	o = outcome{status: status, kind: statusKind(status), ttfb: max(time.Since(start), 1)}
	answer, err := u.readAnswer(body, w.buf)
	o.latency = max(time.Since(start), 1)
	u.done(body, err)
	if err != nil {
		o.kind = classify(err)
		return o, false
	}
	finishUpload(&o, answer, u.form.fixture, u.created)
	return o, false
}

// send writes the request: one writev for a held fixture, else the head, the
// generated content and the tail.
func (u *rawUpload) send(c net.Conn) error {
	if u.form.content != nil {
		bufs := net.Buffers{u.req, u.form.content, u.form.tail}
		_, err := bufs.WriteTo(c)
		return err
	}
	if _, err := c.Write(u.req); err != nil {
		return err
	}
	if u.copyBuf == nil {
		u.copyBuf = make([]byte, 256<<10)
	}
	content := u.form.open()
	defer content.Close()
	// through a plain Writer: TCPConn.ReadFrom would allocate a buffer per call
	if _, err := io.CopyBuffer(struct{ io.Writer }{c}, content, u.copyBuf); err != nil {
		return err
	}
	_, err := c.Write(u.form.tail)
	return err
}

// readAnswer reads the answer's body: into buf when it has a Content-Length that fits
// (coffer's upload answers do), else it is read and discarded and the answer is nil.
func (u *rawUpload) readAnswer(body bodyInfo, buf []byte) ([]byte, error) {
	if body.chunked || body.length < 0 || body.length > int64(len(buf)) {
		_, err := u.readBody(body, buf)
		return nil, err
	}
	n, err := io.ReadFull(u.br, buf[:body.length])
	return buf[:n], noEOF(err)
}
