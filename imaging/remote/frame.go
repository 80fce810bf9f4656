package remote

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/coffer/coffer/imaging/remote/imagerpc"
	"google.golang.org/protobuf/proto"
)

// MaxFrame is the largest encoded frame either side accepts. Source and result bytes
// travel in chunks of at most ChunkSize, well below it.
const (
	MaxFrame  = 1 << 20
	ChunkSize = 256 << 10
)

// errFrameTooLarge is returned for a length prefix beyond MaxFrame: the stream is
// corrupt or not speaking this protocol, and cannot be resynchronised.
var errFrameTooLarge = errors.New("imagerpc: frame longer than MaxFrame")

// frameReader reads length-prefixed frames, reusing one buffer.
type frameReader struct {
	r   io.Reader
	buf []byte
}

// ReadFrame reads one frame into f (reset first). It returns io.EOF at a clean end
// of stream (between frames) and io.ErrUnexpectedEOF inside a frame.
func (fr *frameReader) ReadFrame(f *imagerpc.Frame) error {
	var hdr [4]byte
	if _, err := io.ReadFull(fr.r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return errFrameTooLarge
	}
	if cap(fr.buf) < int(n) {
		fr.buf = make([]byte, n)
	}
	b := fr.buf[:n]
	if _, err := io.ReadFull(fr.r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	proto.Reset(f)
	if err := proto.Unmarshal(b, f); err != nil {
		return fmt.Errorf("imagerpc: bad frame: %w", err)
	}
	return nil
}

// frameWriter writes length-prefixed frames, one at a time from any goroutine,
// reusing one buffer.
type frameWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// WriteFrame encodes f and writes it whole.
func (fw *frameWriter) WriteFrame(f *imagerpc.Frame) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	b, err := proto.MarshalOptions{}.MarshalAppend(append(fw.buf[:0], 0, 0, 0, 0), f)
	if err != nil {
		return err
	}
	if len(b)-4 > MaxFrame {
		return errFrameTooLarge
	}
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	fw.buf = b[:0]
	_, err = fw.w.Write(b)
	return err
}
