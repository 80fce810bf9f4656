package httpserve

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Plan is one answer, computed once by a face and written by either of two writers:
// Serve through net/http (conditionals and ranges by http.ServeContent) or
// Frame.SendPlan on the HTTP/1.1 fast path. What the answer is (status, header
// fields, body) is decided in one place, so the two paths cannot drift; only how it
// is framed differs (net/http sorts the fields, the fast path writes them in order).
//
// A Plan is a value meant to live on the caller's stack: its fields are held in an
// array (with a slice for more than it holds), so filling it and writing it on the
// fast path allocate nothing (net/http's header map takes one allocation for all
// the values). Fill it with Reset, then Add and Set.
type Plan struct {
	Status int
	// Name is the document's name: net/http's writer deduces a missing Content-Type
	// from its extension (http.ServeContent), the fast path declines such a Plan.
	Name string
	// ModTime, unless ZeroTime, is sent as Last-Modified, and http.ServeContent
	// evaluates the request's date conditions against it.
	ModTime time.Time
	// Body is Size bytes of content (Size -1: unknown, copied as it comes). A body
	// of known size answered 200 goes through http.ServeContent on net/http's path,
	// so it must seek.
	Body io.ReadSeeker
	Size int64
	n    int // fields used in inline
	// inline holds the first fields, more the others.
	inline [planInline]Field
	more   []Field
}

// planInline is how many fields a Plan holds without allocating.
const planInline = 16

// Field is one header field of a Plan.
type Field struct{ Name, Value string }

// Reset empties p for an answer with status and a body of unknown size.
func (p *Plan) Reset(status int) {
	*p = Plan{Status: status, Size: -1, more: p.more[:0]}
}

// Add adds a field named name (canonical form: it is written as given).
func (p *Plan) Add(name, value string) {
	if p.n < planInline {
		p.inline[p.n] = Field{name, value}
		p.n++
		return
	}
	p.more = append(p.more, Field{name, value})
}

// Set replaces the value of the first field named name, or adds one.
func (p *Plan) Set(name, value string) {
	if f := p.field(name); f != nil {
		f.Value = value
		return
	}
	p.Add(name, value)
}

// Del removes every field named name.
func (p *Plan) Del(name string) {
	n := 0
	for i := range p.inline[:p.n] {
		if p.inline[i].Name != name {
			p.inline[n] = p.inline[i]
			n++
		}
	}
	for i := n; i < p.n; i++ {
		p.inline[i] = Field{}
	}
	p.n = n
	p.more = slices.DeleteFunc(p.more, func(f Field) bool { return f.Name == name })
	for p.n < planInline && len(p.more) > 0 { // keep the order: inline first
		p.inline[p.n], p.more = p.more[0], p.more[1:]
		p.n++
	}
}

// Get returns the value of the first field named name.
func (p *Plan) Get(name string) (string, bool) {
	if f := p.field(name); f != nil {
		return f.Value, true
	}
	return "", false
}

// field is the first field named name, nil if none.
func (p *Plan) field(name string) *Field {
	for i := range p.inline[:p.n] {
		if p.inline[i].Name == name {
			return &p.inline[i]
		}
	}
	for i := range p.more {
		if p.more[i].Name == name {
			return &p.more[i]
		}
	}
	return nil
}

// Len returns the number of fields.
func (p *Plan) Len() int { return p.n + len(p.more) }

// Field returns the i-th field, in the order added.
func (p *Plan) Field(i int) Field {
	if i < p.n {
		return p.inline[i]
	}
	return p.more[i-p.n]
}

// Header puts p's fields into h: a name's first field replaces what h holds under
// it (the Frame's X-Request-Id, say), its later ones add values, in order.
func (p *Plan) Header(h http.Header) { p.header(h, 0) }

// header is Header with the value slices in one allocation, which has room for
// spare more values (setOne).
func (p *Plan) header(h http.Header, spare int) []string {
	vals := make([]string, 0, p.Len()+spare)
	for i := range p.Len() {
		f := p.Field(i)
		if old, ok := h[f.Name]; ok && p.earlier(f.Name, i) {
			h[f.Name] = append(old, f.Value)
			continue
		}
		setOne(h, &vals, f.Name, f.Value)
	}
	return vals
}

// setOne sets h's name to the one value v, held in *vals.
func setOne(h http.Header, vals *[]string, name, v string) {
	*vals = append(*vals, v)
	n := len(*vals)
	h[name] = (*vals)[n-1 : n : n]
}

// earlier reports whether a field before the i-th is named name.
func (p *Plan) earlier(name string, i int) bool {
	for j := range i {
		if p.Field(j).Name == name {
			return true
		}
	}
	return false
}

// Serve writes p to w as the answer to r, the fields first (Header). A 200 of known
// size goes through http.ServeContent, which evaluates r's conditionals and ranges
// (Range brought to maxRanges and coffer's rules first: ApplyRange) and sends files
// with sendfile; Last-Modified is written here unless r has a date condition
// (formatting it without time.Format). Any other answer is p's status and body as it
// is (none for HEAD), with Content-Length when Size is known; the error is the body's
// copy's. Content-Length is set for a body with a Content-Encoding, since
// ServeContent leaves it out then.
func (p *Plan) Serve(w http.ResponseWriter, r *http.Request, maxRanges int) error {
	h := w.Header()
	vals := p.header(h, 2)
	var buf [32]byte
	modtime := p.ModTime
	if p.Status == http.StatusOK && p.Size >= 0 {
		if h["Content-Encoding"] != nil {
			setOne(h, &vals, "Content-Length", strconv.FormatInt(p.Size, 10))
		}
		if !ZeroTime(modtime) && !HasDateCondition(r.Header) {
			setOne(h, &vals, "Last-Modified", string(AppendHTTPDate(buf[:0], modtime)))
			modtime = time.Time{}
		}
		ApplyRange(r, p.Size, maxRanges)
		http.ServeContent(w, r, p.Name, modtime, p.Body)
		return nil
	}
	if p.Size >= 0 {
		setOne(h, &vals, "Content-Length", strconv.FormatInt(p.Size, 10))
	}
	if !ZeroTime(modtime) {
		setOne(h, &vals, "Last-Modified", string(AppendHTTPDate(buf[:0], modtime)))
	}
	w.WriteHeader(p.Status)
	if r.Method == http.MethodHead || p.Body == nil {
		return nil
	}
	_, err := io.Copy(w, p.Body)
	return err
}

// Fast reports whether SendPlan writes p as Serve does for a request without
// conditionals or ranges, but for the fields' order: a status with no body or a body
// of known size with a Content-Type (net/http's path would sniff one), and none of the
// fields the Frame writes on the fast path (fastHeaders), which a Plan's field
// replaces on net/http's path.
func (p *Plan) Fast() bool {
	bodiless := p.Status == http.StatusNotModified
	if p.Size < 0 && !bodiless {
		return false
	}
	if _, ok := p.Get("Content-Type"); !ok && !bodiless {
		return false
	}
	for _, name := range frameFields {
		if _, ok := p.Get(name); ok {
			return false
		}
	}
	return true
}

// frameFields are the fields fastHeaders writes.
var frameFields = [...]string{"X-Request-Id", "X-Content-Type-Options", "Server-Timing"}

// SendPlan writes p, which must be Fast, on the fast path: its status, fields,
// Last-Modified and, for a 200 of known size, Accept-Ranges as http.ServeContent
// adds it, the Frame's fields (fastHeaders), then the body (none for 304) with
// sendFast under route.
func (f *Frame) SendPlan(st *FastState, route string, req *FastRequest, w *FastWriter, p *Plan) {
	w.header(p.Status)
	for i := range p.inline[:p.n] {
		w.add(p.inline[i].Name, p.inline[i].Value)
	}
	for i := range p.more {
		w.add(p.more[i].Name, p.more[i].Value)
	}
	if !ZeroTime(p.ModTime) {
		w.addDate("Last-Modified", p.ModTime)
	}
	if _, ok := p.Get("Accept-Ranges"); !ok && p.Status == http.StatusOK && p.Size >= 0 {
		w.add("Accept-Ranges", "bytes") // as http.ServeContent sets it
	}
	f.fastHeaders(st, req, w)
	size := p.Size
	if p.Status == http.StatusNotModified {
		size = -1
	}
	f.sendFast(st, route, req, w, p.Body, size)
}
