package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/imaging/remote/imagerpc"
	"google.golang.org/protobuf/proto"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader, as a broken or hostile
// peer would: it must never panic nor allocate beyond MaxFrame, and every frame it
// accepts must survive a write and a second read unchanged.
func FuzzReadFrame(f *testing.F) {
	for _, fr := range []*imagerpc.Frame{
		{Body: &imagerpc.Frame_Hello{Hello: &imagerpc.Hello{Protocol: protocol, Formats: []string{"jpeg"}}}},
		{Id: 7, Body: &imagerpc.Frame_Request{Request: &imagerpc.Request{Transform: opts.Canonical(), SizeHint: 9}}},
		{Id: 7, Body: &imagerpc.Frame_Chunk{Chunk: &imagerpc.Chunk{Data: []byte("abc"), Last: true}}},
		{Id: 7, Body: &imagerpc.Frame_Response{Response: &imagerpc.Response{Error: &imagerpc.Error{Code: "invalid", Message: "m"}}}},
		{Id: 9, Body: &imagerpc.Frame_Ping{Ping: &imagerpc.Ping{}}},
		{Id: 9, Body: &imagerpc.Frame_Pong{Pong: &imagerpc.Pong{}}},
	} {
		var b bytes.Buffer
		if err := (&frameWriter{w: &b}).WriteFrame(fr); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add(binary.BigEndian.AppendUint32(nil, MaxFrame+1))
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bytes.NewReader(data)
		fr := &frameReader{r: br}
		for {
			at := len(data) - br.Len() // where this frame's length prefix starts
			got := &imagerpc.Frame{}
			err := fr.ReadFrame(got)
			if cap(fr.buf) > MaxFrame {
				t.Fatalf("buffer grew to %d", cap(fr.buf))
			}
			if err != nil {
				if errors.Is(err, errFrameTooLarge) && binary.BigEndian.Uint32(data[at:]) <= MaxFrame {
					t.Fatalf("refused a frame within MaxFrame: %v", err)
				}
				return
			}
			var b bytes.Buffer
			if err := (&frameWriter{w: &b}).WriteFrame(got); err != nil {
				t.Fatalf("accepted frame does not encode: %v", err)
			}
			again := &imagerpc.Frame{}
			if err := (&frameReader{r: &b}).ReadFrame(again); err != nil || !proto.Equal(got, again) {
				t.Fatalf("round trip: %v\n%v\n%v", err, got, again)
			}
		}
	})
}

// FuzzServeTransform sends arbitrary transform strings to the worker's side of the
// protocol, as a broken or hostile server would: it must never panic; a string it
// accepts reaches the engine as valid, normalised options whose canonical form is
// that string, and any other is answered with EINVALID without reaching the engine.
func FuzzServeTransform(f *testing.F) {
	for _, s := range []string{"", "q=80&w=10", opts.Canonical(), "b=2&f=webp&q=80&w=400", "w=10", "q=80&w=10&x=1",
		"b=0.5&f=auto&fit=cover&gravity=attention&h=9&q=1&w=7", "q=80&w=%zz", "q=80;w=1", "f=png&h=1&w=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // proto3 strings are UTF-8: such a frame does not encode, nor decode (FuzzReadFrame)
		}
		resp, e := serveOne(t, s)
		if !e.called {
			if code := resp.GetError().GetCode(); code != coffer.EINVALID {
				t.Fatalf("%q refused with %q, want %q", s, code, coffer.EINVALID)
			}
			return
		}
		o := e.got
		if resp.GetError() != nil || o.Validate() != nil || o.Normalize() != o || o.Canonical() != s {
			t.Fatalf("%q reached the engine as %+v (canonical %q, valid: %v); response %v", s, o, o.Canonical(), o.Validate(), resp)
		}
	})
}

// FuzzParseAddrs feeds arbitrary --image-workers-remote values: they must never panic,
// and every accepted address must print back to itself.
func FuzzParseAddrs(f *testing.F) {
	for _, s := range []string{"127.0.0.1:9100", "http://127.0.0.1:9100,https://[::1]:9101/", "tls://imager.internal:1", "h:1,h:1", "ftp://x:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addrs, err := ParseAddrs(s)
		if err != nil {
			return
		}
		for _, a := range addrs {
			again, err := ParseAddrs(a.String())
			if err != nil || len(again) != 1 || again[0].Host != a.Host || again[0].Port != a.Port {
				t.Fatalf("%q: %v does not parse back: %v %v", s, a, again, err)
			}
		}
	})
}
