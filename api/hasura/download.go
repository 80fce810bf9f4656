package hasura

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/httpserve"
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
		h.serveContent(w, r, f, b, sharedAnswer(p, b), sizeOnly(f.Size))
		return
	}
	f, b, rd, err := h.svc.OpenFile(r.Context(), p, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer rd.Close()
	h.serveContent(w, r, f, b, sharedAnswer(p, b), httpserve.SeekerOf(rd))
}

// serveContent writes f's answer (filePlan) through net/http: http.ServeContent
// does conditional requests (RFC 9110 order), single and multiple ranges and
// sendfile for disk blobs; the Range header is first brought to coffer's rules
// (httpserve.ApplyRange) and conditional dates to the form ServeContent reads
// (httpserve.NormalizeDates). shared says whether shared caches may store the
// answer (sharedAnswer).
func (h *Handler) serveContent(w http.ResponseWriter, r *http.Request, f *coffer.File, b *coffer.Bucket, shared bool, content io.ReadSeeker) {
	var pl httpserve.Plan
	filePlan(&pl, f, b, shared, content)
	if r.Method != http.MethodHead {
		h.frame.AllowWrite(w, r, f.Size)
	}
	if httpserve.HasDateCondition(r.Header) {
		httpserve.NormalizeDates(r.Header)
	}
	je := newJSONErrors(w)
	_ = pl.Serve(&je, r, h.cfg.MaxRanges)
}

// filePlan fills pl with the answer to a download of f in b, the one getFile
// (serveContent) and the fast path (fastAnswer) write: 200, f's fields
// (fileFields), Last-Modified, and f.Size bytes of content (nil for a HEAD on the
// fast path). A request's conditions and ranges then make of it a 304, 206, 412 or
// 416 (http.ServeContent; on the fast path only a 304: notModified).
func filePlan(pl *httpserve.Plan, f *coffer.File, b *coffer.Bucket, shared bool, content io.ReadSeeker) {
	pl.Reset(http.StatusOK)
	fileFields(f, b, shared, pl.Add)
	pl.ModTime, pl.Body, pl.Size = f.UpdatedAt, content, f.Size
}

// notModified turns pl, a filePlan, into its 304 Not Modified as http.ServeContent
// and jsonErrors write it: without the fields of notModifiedDrops, without a body
// or Content-Length, with Last-Modified only when the file has no ETag.
func notModified(pl *httpserve.Plan, etag string) {
	pl.Status = http.StatusNotModified
	for k := range notModifiedDrops {
		pl.Del(k)
	}
	pl.Body, pl.Size = nil, -1
	if etag != "" {
		pl.ModTime = time.Time{}
	}
}

// fileFields calls add with each of a file's response header fields but
// Last-Modified (filePlan's ModTime). An answer shared caches may store (shared) carries the bucket's
// cacheControl in Cache-Control and, as hasura-storage does for CDNs (Fastly), in
// Surrogate-Control; any other gets coffer.PrivateCacheControl and no
// Surrogate-Control: a CDN reads Surrogate-Control first (Fastly for the TTL), and
// Varnish's built-in VCL skips its Cache-Control "private" check when it is present.
func fileFields(f *coffer.File, b *coffer.Bucket, shared bool, add func(k, v string)) {
	add("Content-Type", f.MimeType)
	if !coffer.PassiveType(f.MimeType) {
		add("Content-Security-Policy", coffer.SandboxCSP)
	}
	add("Etag", f.ETag)
	switch {
	case !shared:
		add("Cache-Control", coffer.PrivateCacheControl(b.CacheControl))
	case b.CacheControl != "":
		add("Cache-Control", b.CacheControl)
		add("Surrogate-Control", b.CacheControl)
	}
	add("Surrogate-Key", f.ID) // purge a file from a CDN by its id
	add("Content-Disposition", contentDisposition(f, b))
	add("Accept-Ranges", "bytes")
}

// sharedAnswer reports whether shared caches (a CDN in front) may store the answer
// to a download of b's file by p: when p is anonymous (no credential: the public
// role's rules chose the answer, the same for everyone), or when the bucket opts in
// (cacheControlShared). An answer that needed the admin secret or a JWT is private,
// as is a presigned URL's (p nil: presignedContents), even in a public bucket: a CDN
// that keys its cache on the path alone would hand it to anyone. hasura-storage
// sends the bucket's cacheControl on every download (cacheControlShared's behaviour).
func sharedAnswer(p *coffer.Principal, b *coffer.Bucket) bool {
	return b.CacheControlShared || p != nil && p.Anonymous
}

// notModifiedDrops are the fields of fileFields that a 304 leaves out: hasura-storage's
// (jsonErrors) and http.ServeContent's.
var notModifiedDrops = map[string]bool{"Content-Disposition": true, "Accept-Ranges": true, "Surrogate-Key": true, "Content-Type": true}

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
// error shape (httpserve.ErrorWriter with writeErrorStatus), and gives 304 and 412
// answers hasura-storage's headers and no body.
type jsonErrors struct{ httpserve.ErrorWriter }

// newJSONErrors wraps w for ServeContent or the mux.
func newJSONErrors(w http.ResponseWriter) jsonErrors {
	return jsonErrors{httpserve.ErrorWriter{ResponseWriter: w, Encode: writeErrorStatus}}
}

// WriteHeader applies hasura-storage's headers to 206, 304 and 412, and lets
// httpserve.ErrorWriter answer other errors as JSON.
func (j *jsonErrors) WriteHeader(code int) {
	switch {
	case code == http.StatusPartialContent:
		// hasura-storage sends Accept-Ranges on 200 only (its GetFile206ResponseHeaders
		// have none); http.ServeContent sets it on every answer it serves.
		j.Header().Del("Accept-Ranges")
	case code == http.StatusNotModified: // hasura-storage: validators and caching only
		h := j.Header()
		for k := range notModifiedDrops {
			h.Del(k)
		}
	case code == http.StatusPreconditionFailed && !j.Answered():
		// hasura-storage: an empty body with the file's ETag and caching headers.
		h := j.Header()
		for _, k := range [...]string{"Content-Type", "Content-Disposition", "Accept-Ranges", "Surrogate-Key", "Last-Modified"} {
			h.Del(k)
		}
		h.Set("Content-Length", "0")
		j.Answer(code)
		return
	}
	j.ErrorWriter.WriteHeader(code)
}
