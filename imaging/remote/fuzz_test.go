package remote

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/coffer/coffer/imaging/remote/imagerpc"
	"google.golang.org/protobuf/proto"
)

// FuzzReadFrame feeds arbitrary bytes to the frame reader, as a broken or hostile
// peer would: it must never panic nor allocate beyond MaxFrame, and every frame it
// accepts must survive a write and a second read unchanged.
func FuzzReadFrame(f *testing.F) {
	for _, fr := range []*imagerpc.Frame{
		{Body: &imagerpc.Frame_Hello{Hello: &imagerpc.Hello{Protocol: 1, Formats: []string{"jpeg"}}}},
		{Id: 7, Body: &imagerpc.Frame_Request{Request: &imagerpc.Request{Options: optionsToProto(opts), SizeHint: 9}}},
		{Id: 7, Body: &imagerpc.Frame_Chunk{Chunk: &imagerpc.Chunk{Data: []byte("abc"), Last: true}}},
		{Id: 7, Body: &imagerpc.Frame_Response{Response: &imagerpc.Response{Error: &imagerpc.Error{Code: "invalid", Message: "m"}}}},
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
