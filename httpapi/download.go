package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// getFile serves GET and HEAD /v1/files/{id}. HEAD answers from metadata alone.
func (h *Handler) getFile(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	id := r.PathValue("id")
	o, err := transformOptions(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !o.IsZero() {
		h.serveVariant(w, r, p, id, o)
		return
	}
	if r.Method == http.MethodHead {
		f, b, err := h.svc.GetFile(r.Context(), p, id)
		if err != nil {
			writeError(w, r, err)
			return
		}
		h.serveContent(w, r, f, b, sizeOnly(f.Size))
		return
	}
	f, b, rd, err := h.svc.OpenFile(r.Context(), p, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer rd.Close()
	h.serveContent(w, r, f, b, seekerOf(rd))
}

// serveContent sets coffer's headers and lets http.ServeContent do conditional
// requests (RFC 9110 order), single and multiple ranges and sendfile for disk blobs.
func (h *Handler) serveContent(w http.ResponseWriter, r *http.Request, f *coffer.File, b *coffer.Bucket, content io.ReadSeeker) {
	hd := w.Header()
	hd.Set("Content-Type", f.MimeType)
	hd.Set("Etag", f.ETag)
	if b.CacheControl != "" {
		hd.Set("Cache-Control", b.CacheControl)
	}
	hd.Set("Content-Disposition", contentDisposition(f, b))
	hd.Set("Accept-Ranges", "bytes")
	if r.Method != http.MethodHead {
		extra := time.Duration(f.Size / h.cfg.MinWriteRate * int64(time.Second))
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.cfg.WriteTimeout + extra))
	}
	if tooManyRanges(r.Header.Get("Range"), h.cfg.MaxRanges) {
		r.Header.Del("Range")
	}
	http.ServeContent(&jsonErrors{ResponseWriter: w}, r, "", f.UpdatedAt, content)
}

// tooManyRanges reports whether a Range header lists more than max ranges.
func tooManyRanges(rng string, max int) bool {
	return rng != "" && strings.Count(rng, ",") >= max
}

// activeTypes can run script when a browser renders them inline.
var activeTypes = map[string]bool{
	"text/html": true, "application/xhtml+xml": true, "image/svg+xml": true, "text/xml": true,
	"application/xml": true, "text/javascript": true, "application/javascript": true,
	"application/x-javascript": true, "application/ecmascript": true, "text/ecmascript": true,
	"application/pdf": true, "application/x-shockwave-flash": true, "text/xsl": true,
	"application/vnd.wap.xhtml+xml": true, "multipart/x-mixed-replace": true,
}

// contentDisposition serves script-capable types as attachments unless the bucket
// allows inline display.
func contentDisposition(f *coffer.File, b *coffer.Bucket) string {
	mt := f.MimeType
	if strings.ContainsRune(mt, ';') {
		mt, _, _ = mime.ParseMediaType(mt)
	}
	kind := "inline"
	if activeTypes[strings.ToLower(mt)] && !b.AllowInline {
		kind = "attachment"
	}
	name := path.Base(f.Name)
	if plainToken(name) { // what FormatMediaType would write, without its allocations
		return kind + "; filename=" + name
	}
	return mime.FormatMediaType(kind, map[string]string{"filename": name})
}

// seekerOf returns the *os.File under a disk blob so ServeContent can sendfile.
func seekerOf(rd blob.Reader) io.ReadSeeker {
	for {
		if of, ok := rd.(interface{ OSFile() *os.File }); ok {
			return of.OSFile()
		}
		u, ok := rd.(interface{ Unwrap() blob.Reader })
		if !ok {
			return rd
		}
		rd = u.Unwrap()
	}
}

// sizeOnly is a ReadSeeker of a known size that is never read: HEAD needs no bytes.
type sizeOnly int64

func (s sizeOnly) Read([]byte) (int, error) { return 0, errors.New("sizeOnly: HEAD must not read") }
func (s sizeOnly) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekEnd {
		return int64(s) + off, nil
	}
	return off, nil
}

// jsonErrors turns ServeContent's plain-text error responses (416, 412 with bodies)
// into coffer's JSON error shape.
type jsonErrors struct {
	http.ResponseWriter
	swallow bool
}

func (j *jsonErrors) WriteHeader(code int) {
	if code >= 400 && !j.swallow {
		j.swallow = true
		msg := http.StatusText(code)
		if code == http.StatusRequestedRangeNotSatisfiable {
			msg = "requested range not satisfiable"
		}
		writeErrorStatus(j.ResponseWriter, code, msg)
		return
	}
	j.ResponseWriter.WriteHeader(code)
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.swallow {
		return len(p), nil
	}
	return j.ResponseWriter.Write(p)
}

// ReadFrom keeps sendfile reachable through the wrapper.
func (j *jsonErrors) ReadFrom(r io.Reader) (int64, error) {
	if j.swallow {
		return io.Copy(io.Discard, r)
	}
	if rf, ok := j.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{j.ResponseWriter}, r)
}
