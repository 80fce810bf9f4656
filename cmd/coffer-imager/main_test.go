package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
)

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"--workers", "3", "--max-bytes", "1000", "--max-pixels", "2000", "--max-output-pixels", "3000", "--max-frames", "4",
		"--max-cost", "5000", "--timeout", "1.5s"})
	if err != nil {
		t.Fatal(err)
	}
	want := imaging.Config{Workers: 3, Queue: 1024, MaxSourceBytes: 1000, MaxSourcePixels: 2000, MaxOutputPixels: 3000, MaxFrames: 4,
		MaxCost: 5000, Timeout: 1500 * time.Millisecond, UserWorkers: 3}
	if cfg.imaging != want {
		t.Errorf("cfg = %+v, want %+v", cfg.imaging, want)
	}
	for _, args := range [][]string{{"--workers", "0"}, {"--bogus"}, {"extra"}, {"--insecure"}, {"--listen", ":1", "--tls-cert", "c"},
		{"--listen", ":1", "--tls-client-ca", "ca"}, {"--listen", ":1", "--max-conns", "0"},
		{"--listen", ":1", "--max-handshakes", "0"}, {"--listen", ":1", "--max-handshakes", "1025"}, {"--listen", ":1", "--handshake-timeout", "0"},
		{"--listen", ":1", "--handshake-timeout", "-1s"}, {"--listen", ":1", "--handshake-timeout", "61s"}, {"--listen", ":1", "--handshake-timeout", "3"}} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// The handshake budget and deadline have small defaults and reach the listener.
func TestHandshakeFlags(t *testing.T) {
	for _, tc := range []struct {
		args     []string
		max      int
		deadline time.Duration
	}{
		{nil, 16, 3 * time.Second},
		{[]string{"--max-handshakes", "1", "--handshake-timeout", "1m"}, 1, time.Minute},
		{[]string{"--max-handshakes", "1024", "--handshake-timeout", "250ms"}, 1024, 250 * time.Millisecond},
	} {
		cfg, err := parseFlags(append([]string{"--listen", "127.0.0.1:0", "--secret", "s"}, tc.args...))
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		lc, err := cfg.net.listenConfig(cfg.imaging, nil)
		if err != nil || lc.MaxHandshakes != tc.max || lc.HandshakeTimeout != tc.deadline || lc.MaxConns != 64 {
			t.Errorf("%q: %+v, %v; want %d handshakes within %v", tc.args, lc, err, tc.max, tc.deadline)
		}
	}
}

// The server passes exactly the flags this worker reads.
func TestParseFlagsFromServer(t *testing.T) {
	c := imaging.DefaultConfig()
	c.Workers, c.MaxSourceBytes, c.MaxFrames, c.MaxCost, c.Timeout = 5, 12345, 7, 999, 3*time.Second
	cfg, err := parseFlags(remote.WorkerArgs(c))
	if err != nil {
		t.Fatal(err)
	}
	c.Queue, c.UserWorkers, c.UserQueue = 1024, 5, 0
	if cfg.imaging != c || cfg.net.listen != "" {
		t.Errorf("cfg = %+v, want %+v", cfg, c)
	}
}

// After privateStdout, a stray print to stdout (as a C library might do) goes to
// stderr, and only what is written to the returned file reaches the server.
func TestPrivateStdout(t *testing.T) {
	if os.Getenv("COFFER_IMAGER_STDOUT_TEST") == "1" {
		out, err := privateStdout()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println("stray print")
		out.WriteString("frames only")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestPrivateStdout$")
	cmd.Env = append(os.Environ(), "COFFER_IMAGER_STDOUT_TEST=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stdout.String() != "frames only" || !strings.Contains(stderr.String(), "stray print") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
