package bench

import (
	"bufio"
	"context"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"
)

// cannedServer answers each request on a connection with the next of answers
// (cycling) and closes the connection after an answer when closeAfter is true. It
// records the requests' header blocks.
type cannedServer struct {
	ln         net.Listener
	answers    []string
	closeAfter bool
	mu         sync.Mutex
	requests   []textproto.MIMEHeader
	conns      int
	wg         sync.WaitGroup
}

func startCanned(t *testing.T, closeAfter bool, answers ...string) *cannedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &cannedServer{ln: ln, answers: answers, closeAfter: closeAfter}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *cannedServer) accept() {
	defer s.wg.Done()
	for i := 0; ; i++ {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns++
		s.mu.Unlock()
		s.wg.Add(1)
		go s.serve(c)
	}
}

func (s *cannedServer) serve(c net.Conn) {
	defer s.wg.Done()
	defer c.Close()
	tp := textproto.NewReader(bufio.NewReader(c))
	for {
		if _, err := tp.ReadLine(); err != nil {
			return
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil {
			return
		}
		s.mu.Lock()
		ans := s.answers[len(s.requests)%len(s.answers)]
		s.requests = append(s.requests, h)
		s.mu.Unlock()
		if _, err := c.Write([]byte(ans)); err != nil || s.closeAfter {
			return
		}
	}
}

func TestRawGetResponses(t *testing.T) {
	tests := []struct {
		name       string
		answer     string
		closeAfter bool
		status     int
		bytes      int64
		kind       errKind
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, 5, kindOK},
		{"chunked with extension and trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"3;x=y\r\nabc\r\n4\r\ndefg\r\n0\r\nX-T: 1\r\n\r\n", false, 200, 7, kindOK},
		{"interim 100 then 200", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok", false, 200, 2, kindOK},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, 0, kindOK},
		{"not modified with length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", false, 304, 0, kind1xx3xx},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nabcdef", true, 200, 6, kindOK},
		{"http/1.0 close", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", true, 200, 3, kindOK},
		{"connection close", "HTTP/1.1 503 Busy\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", true, 503, 1, kind5xx},
		{"not found", "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno\n", false, 404, 3, kind4xx},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true, 200, 3, kindConn},
		{"cut chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true, 200, 2, kindConn},
		{"malformed status", "HTTX/1.1 200 OK\r\n\r\n", true, 0, 0, kindOther},
		{"malformed length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", true, 0, 0, kindOther},
		{"malformed chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true, 200, 0, kindOther},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := startCanned(t, tc.closeAfter, tc.answer)
			g, err := newRawGet(context.Background(), "http://"+srv.ln.Addr().String()+"/f?a=1", credentials{adminSecret: "s"}, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			w := &workerState{buf: make([]byte, 4)} // tiny buffer: many reads per body
			for i := 0; i < 3; i++ {
				o := g.do(context.Background(), w, time.Now())
				if o.status != tc.status || o.bytes != tc.bytes || o.kind != tc.kind {
					t.Fatalf("request %d: status %d bytes %d kind %s; want %d %d %s", i, o.status, o.bytes, o.kind,
						tc.status, tc.bytes, tc.kind)
				}
			}
			g.close()
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.requests) != 3 || srv.requests[0].Get("X-Hasura-Admin-Secret") != "s" {
				t.Errorf("server saw %d requests, first %v", len(srv.requests), srv.requests)
			}
			if wantConns := map[bool]int{true: 3, false: 1}[tc.closeAfter]; srv.conns != wantConns {
				t.Errorf("%d connections, want %d (keep-alive only when the answer allows it)", srv.conns, wantConns)
			}
		})
	}
}

func TestRawGetRetriesAClosedIdleConnection(t *testing.T) {
	// The server answers once per connection and closes it without saying so: the
	// next request on the kept connection finds it closed before any answer byte
	// and must be retried on a new connection, not counted as an error.
	srv := startCanned(t, true, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	g, _ := newRawGet(context.Background(), "http://"+srv.ln.Addr().String()+"/", credentials{}, 5*time.Second)
	defer g.close()
	w := &workerState{buf: make([]byte, 64)}
	for i := 0; i < 4; i++ {
		if o := g.do(context.Background(), w, time.Now()); o.kind != kindOK || o.bytes != 2 {
			t.Fatalf("request %d: %+v", i, o)
		}
		time.Sleep(5 * time.Millisecond) // let the close arrive
	}
}

func TestNewRawGet(t *testing.T) {
	tests := []struct {
		url     string
		cred    credentials
		wantReq string
		wantErr string
	}{
		{"http://h/a/b?x=1&y=%20", credentials{token: "T"}, "GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: h\r\nUser-Agent: coffer-bench\r\nAuthorization: Bearer T\r\n\r\n", ""},
		{"https://h/", credentials{}, "", "not http"},
		{"http://h/", credentials{adminSecret: "a\r\nX: y"}, "", "line break"},
	}
	for _, tc := range tests {
		g, err := newRawGet(context.Background(), tc.url, tc.cred, time.Second)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: error %v, want %q", tc.url, err, tc.wantErr)
			}
			continue
		}
		if err != nil || string(g.req) != tc.wantReq || g.addr != "h:80" {
			t.Errorf("%s: %q to %s, %v", tc.url, g.req, g.addr, err)
		}
	}
}
