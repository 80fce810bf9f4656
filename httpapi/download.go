package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
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
// requests (RFC 9110 order), single and multiple ranges and sendfile for disk blobs;
// the Range header is first brought to coffer's rules (applyRange, ranges.go).
func (h *Handler) serveContent(w http.ResponseWriter, r *http.Request, f *coffer.File, b *coffer.Bucket, content io.ReadSeeker) {
	modtime := fileHeaders(w.Header(), r, f, b)
	if r.Method != http.MethodHead {
		extra := time.Duration(f.Size / h.cfg.MinWriteRate * int64(time.Second))
		setWriteDeadline(w, r, time.Now().Add(h.cfg.WriteTimeout+extra))
	}
	applyRange(r, f.Size, h.cfg.MaxRanges)
	http.ServeContent(&jsonErrors{ResponseWriter: w}, r, "", modtime, content)
}

// fileHeaders sets a file's response headers, with one allocation for all their
// value slices, and returns the modification time to hand to http.ServeContent.
// Unless the request has a date condition, that is the zero time and Last-Modified
// is set here, formatted without time.Format (which ServeContent would use: slower,
// with a deep stack that often makes the serving goroutine's stack grow again after
// a GC shrank it).
func fileHeaders(hd http.Header, r *http.Request, f *coffer.File, b *coffer.Bucket) time.Time {
	vals := make([]string, 0, 9)
	set := func(k, v string) { vals = append(vals, v); hd[k] = vals[len(vals)-1 : len(vals) : len(vals)] }
	set("Content-Type", f.MimeType)
	if !coffer.PassiveType(f.MimeType) {
		set("Content-Security-Policy", sandboxCSP)
	}
	set("Etag", f.ETag)
	if b.CacheControl != "" { // hasura-storage mirrors it for CDNs (Fastly) in Surrogate-Control
		set("Cache-Control", b.CacheControl)
		set("Surrogate-Control", b.CacheControl)
	}
	set("Surrogate-Key", f.ID) // purge a file from a CDN by its id
	set("Content-Disposition", contentDisposition(f, b))
	set("Accept-Ranges", "bytes")
	modtime := f.UpdatedAt
	if zeroTime(modtime) || hasDateCondition(r.Header) {
		normalizeDates(r.Header)
		return modtime
	}
	set("Last-Modified", string(appendHTTPDate(make([]byte, 0, 32), modtime)))
	return time.Time{}
}

// zeroTime is http.ServeContent's test for "no modification time".
func zeroTime(t time.Time) bool { return t.IsZero() || t.Equal(time.Unix(0, 0)) }

// hasDateCondition reports whether a request has a header that ServeContent checks
// against the modification time.
func hasDateCondition(h http.Header) bool {
	return h.Get("If-Modified-Since") != "" || h.Get("If-Unmodified-Since") != "" || h.Get("If-Range") != ""
}

// dateHeaders are the request headers ServeContent reads as HTTP dates.
var dateHeaders = [...]string{"If-Modified-Since", "If-Unmodified-Since", "If-Range"}

// normalizeDates rewrites conditional dates that http.ParseTime refuses but that are
// unambiguous RFC 1123 dates in another zone spelling, such as "UTC" (what Go's
// time.RFC1123 writes, and so what Nhost's Go client sends), to http.TimeFormat, so
// they are honoured as hasura-storage honours them instead of ignored.
func normalizeDates(h http.Header) {
	for _, k := range dateHeaders {
		v := h.Get(k)
		if v == "" || strings.HasPrefix(v, `"`) || strings.HasPrefix(v, "W/") {
			continue
		}
		if _, err := http.ParseTime(v); err == nil {
			continue
		}
		layout := time.RFC1123Z // a numeric offset: "+0000"
		if strings.HasSuffix(v, " UTC") || strings.HasSuffix(v, " UT") {
			layout = time.RFC1123 // other abbreviations ("PST") would parse as UTC: ignored
		}
		if t, err := time.Parse(layout, v); err == nil {
			h.Set(k, t.UTC().Format(http.TimeFormat))
		}
	}
}

// appendHTTPDate appends t as http.TimeFormat ("Mon, 02 Jan 2006 15:04:05 GMT").
func appendHTTPDate(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 {
		return t.AppendFormat(b, http.TimeFormat)
	}
	hh, mm, ss := t.Clock()
	b = append(b, t.Weekday().String()[:3]...)
	b = appendPadded(append(b, ", "...), d, 2)
	b = append(append(append(b, ' '), mo.String()[:3]...), ' ')
	b = appendPadded(b, y, 4)
	b = appendPadded(append(b, ' '), hh, 2)
	b = appendPadded(append(b, ':'), mm, 2)
	b = appendPadded(append(b, ':'), ss, 2)
	return append(b, " GMT"...)
}

// appendPadded appends n >= 0 in decimal with at least width digits.
func appendPadded(b []byte, n, width int) []byte {
	for w := 10; width > 1; width, w = width-1, w*10 {
		if n < w {
			b = append(b, '0')
		}
	}
	return strconv.AppendInt(b, int64(n), 10)
}

// sandboxCSP is the Content-Security-Policy of every file response whose type is not
// passive (coffer.PassiveType): the document gets an opaque origin and runs no script,
// plugin or form (sandbox), loads nothing (default-src 'none') but inline styles and
// data: images, so HTML and SVG still display as they look. README: "Content types and
// inline serving".
const sandboxCSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// contentDisposition serves script-capable types as attachments unless the bucket
// allows inline display. Bidirectional controls and invisible characters in names
// stored before coffer refused them are left out (coffer.StripInvisible).
func contentDisposition(f *coffer.File, b *coffer.Bucket) string {
	kind := "inline"
	if !b.AllowInline && coffer.ActiveType(f.MimeType) {
		kind = "attachment"
	}
	// hasura-storage's form: the whole name, query-escaped, quoted (no allocation when
	// nothing needs escaping).
	return kind + `; filename="` + url.QueryEscape(coffer.StripInvisible(f.Name)) + `"`
}

// seekerOf returns the *os.File under a disk blob so ServeContent can sendfile, else
// the driver's own reader (blob.Innermost: as before, those bytes are not counted in
// the blob store's read bytes, like those sent with sendfile).
func seekerOf(rd blob.Reader) io.ReadSeeker {
	if of, ok := blob.As[blob.OSFiler](rd); ok {
		return of.OSFile()
	}
	return blob.Innermost(rd)
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

// jsonErrors turns ServeContent's plain-text error responses (416) into the JSON
// error shape, and gives 304 and 412 answers hasura-storage's headers and no body.
type jsonErrors struct {
	http.ResponseWriter
	swallow bool
}

func (j *jsonErrors) WriteHeader(code int) {
	switch {
	case code == http.StatusNotModified: // hasura-storage: validators and caching only
		h := j.Header()
		h.Del("Content-Disposition")
		h.Del("Accept-Ranges")
		h.Del("Surrogate-Key")
	case code == http.StatusPreconditionFailed && !j.swallow:
		// hasura-storage: an empty body with the file's ETag and caching headers.
		j.swallow = true
		h := j.Header()
		for _, k := range [...]string{"Content-Type", "Content-Disposition", "Accept-Ranges", "Surrogate-Key", "Last-Modified"} {
			h.Del(k)
		}
		h.Set("Content-Length", "0")
		j.ResponseWriter.WriteHeader(code)
		return
	}
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
