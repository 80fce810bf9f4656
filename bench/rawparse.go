package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// errMalformed is a response that is not HTTP/1.x.
var errMalformed = errors.New("malformed HTTP response")

// readHead reads a status line and headers, skipping 1xx interim answers.
func (g *rawConn) readHead() (int, bodyInfo, error) {
	info := bodyInfo{fresh: true}
	for {
		line, err := g.br.ReadSlice('\n')
		if err != nil {
			return 0, info, err
		}
		info.fresh = false
		if len(line) < 13 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[12] != ' ' && line[12] != '\r' && line[12] != '\n' {
			return 0, info, fmt.Errorf("%w: status line %q", errMalformed, line)
		}
		status, err := strconv.Atoi(string(line[9:12]))
		if err != nil {
			return 0, info, fmt.Errorf("%w: status %q", errMalformed, line[9:12])
		}
		info = bodyInfo{length: -1, close: line[7] == '0'} // HTTP/1.0 closes unless keep-alive
		if err := g.readHeaders(&info); err != nil {
			return 0, info, err
		}
		if status >= 100 && status < 200 && status != 101 {
			continue
		}
		if status == 204 || status == 304 || status >= 100 && status < 200 {
			info.length, info.chunked = 0, false
		}
		return status, info, nil
	}
}

// readHeaders reads header lines up to the blank line, noting Content-Length,
// Transfer-Encoding and Connection.
func (g *rawConn) readHeaders(info *bodyInfo) error {
	for {
		line, err := g.br.ReadSlice('\n')
		if err != nil {
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return nil
		}
		name, val, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return fmt.Errorf("%w: header line %q", errMalformed, line)
		}
		val = bytes.TrimSpace(val)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("%w: Content-Length %q", errMalformed, val)
			}
			info.length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			info.chunked = bytes.Contains(bytes.ToLower(val), []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			lv := bytes.ToLower(val)
			info.close = bytes.Contains(lv, []byte("close")) || info.close && !bytes.Contains(lv, []byte("keep-alive"))
		}
	}
}

// readBody reads and discards the body, counting its bytes.
func (g *rawConn) readBody(info bodyInfo, buf []byte) (int64, error) {
	switch {
	case info.chunked:
		return g.readChunked(buf)
	case info.length >= 0:
		return g.discard(info.length, buf)
	}
	return drain(g.br, buf) // until the server closes the connection
}

// discard reads exactly n bytes into buf, over and over; a body that ends early is
// io.ErrUnexpectedEOF.
func (g *rawConn) discard(n int64, buf []byte) (int64, error) {
	var got int64
	for got < n {
		k, err := g.br.Read(buf[:min(int64(len(buf)), n-got)])
		got += int64(k)
		if err != nil {
			return got, noEOF(err)
		}
	}
	return got, nil
}

// readChunked reads a chunked body and its trailers.
func (g *rawConn) readChunked(buf []byte) (int64, error) {
	var total int64
	for {
		line, err := g.br.ReadSlice('\n')
		if err != nil {
			return total, noEOF(err)
		}
		line, _, _ = bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return total, fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if size == 0 {
			return total, g.readHeaders(&bodyInfo{})
		}
		n, err := g.discard(size, buf)
		total += n
		if err == nil {
			_, err = g.br.Discard(2) // CRLF after the data
		}
		if err != nil {
			return total, noEOF(err)
		}
	}
}

// noEOF turns a clean EOF in the middle of a body into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
