package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
)

// serveRaw answers every request head on listen with name's bytes: a fixed header
// (the same fields and about the size of coffer's) and sendfile. It never returns
// but on a listen or accept error.
func serveRaw(listen, name string) error {
	st, err := os.Stat(name)
	if err != nil {
		return err
	}
	hdr := []byte("HTTP/1.1 200 OK\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\n" +
		"Etag: \"0123456789abcdef0123456789abcdef\"\r\nX-Content-Type-Options: nosniff\r\n" +
		"Content-Length: " + strconv.FormatInt(st.Size(), 10) + "\r\nDate: Wed, 25 Nov 2026 00:00:00 GMT\r\n\r\n")
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go rawConn(c.(*net.TCPConn), name, st.Size(), hdr)
	}
}

// rawConn answers requests on c until it fails: each head (up to an empty line) gets
// hdr and the file.
func rawConn(c *net.TCPConn, name string, size int64, hdr []byte) {
	defer c.Close()
	f, err := os.Open(name)
	if err != nil {
		return
	}
	defer f.Close()
	br := bufio.NewReaderSize(c, 4096)
	lr := &io.LimitedReader{}
	for {
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 {
				break
			}
		}
		if _, err := c.Write(hdr); err != nil {
			return
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return
		}
		lr.R, lr.N = f, size
		if _, err := c.ReadFrom(lr); err != nil { // sendfile
			return
		}
	}
}
