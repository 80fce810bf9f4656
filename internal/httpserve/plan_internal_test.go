package httpserve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testPlans are the plans TestPlanWritersAgree serves, by path.
func testPlans() map[string]func(p *Plan) {
	mod := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	body := func(p *Plan, s string) { p.Body, p.Size = strings.NewReader(s), int64(len(s)) }
	return map[string]func(p *Plan){
		"/file": func(p *Plan) {
			p.Reset(200)
			p.Add("Content-Type", "text/plain")
			p.Add("Etag", `"e1"`)
			p.Add("Vary", "Origin")
			p.Add("Vary", "Accept-Encoding")
			p.ModTime = mod
			body(p, "hello, plan")
		},
		"/coded": func(p *Plan) {
			p.Reset(200)
			p.Add("Content-Type", "text/css")
			p.Add("Content-Encoding", "gzip")
			body(p, "\x1f\x8bnot really gzip")
		},
		"/ranges-named": func(p *Plan) {
			p.Reset(200)
			p.Add("Content-Type", "image/png")
			p.Add("Accept-Ranges", "bytes")
			body(p, "png")
		},
		"/empty": func(p *Plan) {
			p.Reset(200)
			p.Add("Content-Type", "text/plain")
			body(p, "")
		},
		"/missing": func(p *Plan) {
			p.Reset(404)
			p.Add("Content-Type", "text/html")
			p.Add("Cache-Control", "no-cache")
			p.ModTime = mod
			body(p, "<h1>not here</h1>")
		},
		"/not-modified": func(p *Plan) {
			p.Reset(304)
			p.Add("Etag", `"e1"`)
			p.Add("Cache-Control", "max-age=60")
		},
	}
}

// TestPlanWritersAgree: every test plan, written by SendPlan on the fast path and
// by Serve through net/http, is the same answer to GET and HEAD but for the Frame's
// fields and the date. (Nothing serves the fast server's Fallback: a request it
// declined would go unanswered.)
func TestPlanWritersAgree(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	frame := &Frame{IDs: NewIDs(), Log: log, Access: NewAccessLog(AccessLogConfig{Mode: AccessLogOff}, log)}
	plans := testPlans()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fs := NewFastServer(Listener(ln), FastHandlerFunc(func(req *FastRequest, w *FastWriter) bool {
		var p Plan
		plans[string(req.Path)](&p)
		if !p.Fast() {
			t.Errorf("%s: not Fast", req.Path)
			return false
		}
		frame.SendPlan(frame.BeginFast(req), "test", req, w, &p)
		return true
	}), time.Minute, time.Minute, log)
	go func() { _ = fs.Serve() }()
	t.Cleanup(func() { _ = fs.Shutdown(context.Background()) })
	srv := httptestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p Plan
		plans[r.URL.Path](&p)
		if err := p.Serve(w, r, 1); err != nil {
			t.Error(err)
		}
	}))
	for path := range plans {
		for _, method := range []string{"GET", "HEAD"} {
			raw := method + " " + path + " HTTP/1.1\r\nHost: h\r\n\r\n"
			fast, slow := exchangeOne(t, ln.Addr().String(), raw, method), exchangeOne(t, srv, raw, method)
			if fast != slow {
				t.Errorf("%s %s:\nfast path:\n%s\nnet/http:\n%s", method, path, fast, slow)
			}
		}
	}
}

// httptestServer serves h through net/http on a loopback port and returns its address.
func httptestServer(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(Listener(ln)) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// exchangeOne sends raw, one request, to addr and renders the answer: status, the
// fields sorted without Date and the Frame's, and the body.
func exchangeOne(t *testing.T, addr, raw, method string) string {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	var lines []string
	for k, vs := range resp.Header {
		switch k {
		case "Date", "X-Request-Id", "X-Content-Type-Options", "Server-Timing":
			continue
		}
		lines = append(lines, k+": "+strings.Join(vs, "|"))
	}
	slices.Sort(lines)
	return fmt.Sprintf("%s\n%s\nbody %q", resp.Status, strings.Join(lines, "\n"), body)
}

func TestPlanFields(t *testing.T) {
	var p Plan
	p.Reset(200)
	for i := range planInline + 4 {
		p.Add("X-F"+strconv.Itoa(i), strconv.Itoa(i))
	}
	p.Set("X-F2", "two")
	p.Set("X-F18", "eighteen")
	p.Set("X-New", "new")
	if p.Len() != planInline+5 {
		t.Fatalf("Len %d", p.Len())
	}
	for name, want := range map[string]string{"X-F2": "two", "X-F18": "eighteen", "X-New": "new", "X-F19": "19"} {
		if v, ok := p.Get(name); !ok || v != want {
			t.Errorf("%s = %q %v, want %q", name, v, ok, want)
		}
	}
	if p.Field(planInline+4).Name != "X-New" {
		t.Errorf("the last field is %v", p.Field(planInline+4))
	}
	p.Add("X-F3", "again")
	p.Del("X-F3")
	p.Del("X-F0")
	if _, ok := p.Get("X-F3"); ok || p.Len() != planInline+3 || p.Field(0).Name != "X-F1" || p.Field(planInline-1).Name != "X-F17" {
		t.Errorf("after Del: %d fields, first %v, %d-th %v", p.Len(), p.Field(0), planInline, p.Field(planInline-1))
	}
	p.Reset(404)
	if p.Len() != 0 || p.Size != -1 || p.Status != 404 {
		t.Errorf("after Reset: %d fields, size %d, status %d", p.Len(), p.Size, p.Status)
	}
}

// TestPlanHeader: a name's first field replaces what the header holds, the
// later ones add to it.
func TestPlanHeader(t *testing.T) {
	var p Plan
	p.Reset(200)
	p.Add("X-Request-Id", "mine")
	p.Add("Vary", "Origin")
	p.Add("Vary", "Accept-Encoding")
	h := http.Header{"X-Request-Id": {"frame's"}, "Vary": {"frame's"}, "Other": {"kept"}}
	p.Header(h)
	want := http.Header{"X-Request-Id": {"mine"}, "Vary": {"Origin", "Accept-Encoding"}, "Other": {"kept"}}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("header %v, want %v", h, want)
	}
}

func TestPlanFast(t *testing.T) {
	for name, c := range map[string]struct {
		fill func(p *Plan)
		fast bool
	}{
		"typed, sized": {func(p *Plan) { p.Add("Content-Type", "a/b"); p.Size = 1 }, true},
		"no type":      {func(p *Plan) { p.Size = 1 }, false},
		"no size":      {func(p *Plan) { p.Add("Content-Type", "a/b") }, false},
		"request id":   {func(p *Plan) { p.Add("Content-Type", "a/b"); p.Size = 1; p.Add("X-Request-Id", "x") }, false},
		"nosniff":      {func(p *Plan) { p.Add("Content-Type", "a/b"); p.Size = 1; p.Add("X-Content-Type-Options", "x") }, false},
		"timing":       {func(p *Plan) { p.Add("Content-Type", "a/b"); p.Size = 1; p.Add("Server-Timing", "x") }, false},
		"304":          {func(p *Plan) { p.Status = 304 }, true},
	} {
		var p Plan
		p.Reset(200)
		c.fill(&p)
		if p.Fast() != c.fast {
			t.Errorf("%s: Fast %v", name, !c.fast)
		}
	}
}

// FuzzPlanFields runs Add, Set and Del on a Plan and on a plain slice of fields,
// from ops (two bits the operation, the rest the name), and checks that both hold
// the same fields in the same order, across the inline array and its overflow.
func FuzzPlanFields(f *testing.F) {
	f.Add([]byte{0, 4, 8, 1, 5, 2, 6})
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz0123456789"))
	f.Fuzz(func(t *testing.T, ops []byte) {
		var p Plan
		p.Reset(200)
		var ref []Field
		for i, op := range ops {
			name, value := "X-"+strconv.Itoa(int(op>>2)%24), strconv.Itoa(i)
			switch op & 3 {
			case 0, 3:
				p.Add(name, value)
				ref = append(ref, Field{name, value})
			case 1:
				p.Set(name, value)
				if j := slices.IndexFunc(ref, func(f Field) bool { return f.Name == name }); j >= 0 {
					ref[j].Value = value
				} else {
					ref = append(ref, Field{name, value})
				}
			case 2:
				p.Del(name)
				ref = slices.DeleteFunc(ref, func(f Field) bool { return f.Name == name })
			}
		}
		got := make([]Field, p.Len())
		for i := range got {
			got[i] = p.Field(i)
		}
		if !slices.Equal(got, ref) {
			t.Fatalf("plan %v, want %v", got, ref)
		}
	})
}
