// Package clamdtest gives tests a real clamd: the one the test script started
// (COFFER_TEST_CLAMD_ADDR), or one of their own started from Debian's clamav-daemon
// with a one-line signature database (the EICAR test file's MD5), so it starts in
// milliseconds and never downloads anything.
package clamdtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/virusscan/clamd"
)

// EICAR is the anti-malware test file; every scanner reports it (68 bytes).
const EICAR = `X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

// Name is the name the test database gives EICAR.
const Name = "Eicar-Test-Signature"

// Signature is what clamd reports for it: clamd appends ".UNOFFICIAL" to the names
// of signatures from databases that are not ClamAV's signed ones.
const Signature = Name + ".UNOFFICIAL"

// HDB is the signature database line: MD5:size:name of EICAR.
const HDB = "44d88612fea8a8f36de82e1278abb02f:68:" + Name + "\n"

func missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("COFFER_TEST_REQUIRE_SERVICES") == "1" {
		t.Fatalf("%s and COFFER_TEST_REQUIRE_SERVICES=1", what)
	}
	t.Skip(what)
}

// Addr returns COFFER_TEST_CLAMD_ADDR, skipping the test when it is unset (failing
// instead when COFFER_TEST_REQUIRE_SERVICES=1).
func Addr(t testing.TB) string {
	t.Helper()
	a := os.Getenv("COFFER_TEST_CLAMD_ADDR")
	if a == "" {
		missing(t, "COFFER_TEST_CLAMD_ADDR is not set")
	}
	return a
}

// Options change a daemon started by Start.
type Options struct {
	StreamMaxLength string // clamd's StreamMaxLength, e.g. "1M"; default "2000M"
	Unix            bool   // also listen on a unix socket
}

// Daemon is a clamd started by Start; it stops when the test ends.
type Daemon struct {
	Addr   string // 127.0.0.1:port
	Socket string // the unix socket, with Options.Unix
	cmd    *exec.Cmd
}

// Stop kills the daemon now (it is also stopped when the test ends).
func (d *Daemon) Stop() {
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
}

// Start runs a clamd of the test's own on a free loopback port, skipping the test
// when the clamd binary is missing (failing with COFFER_TEST_REQUIRE_SERVICES=1).
func Start(t testing.TB, o Options) *Daemon {
	t.Helper()
	bin, err := exec.LookPath("clamd")
	if err != nil {
		bin = "/usr/sbin/clamd"
		if _, err := os.Stat(bin); err != nil {
			missing(t, "clamd is not installed (apt-get install clamav-daemon)")
		}
	}
	dir, err := os.MkdirTemp("", "clamd") // short: unix socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	d := &Daemon{Addr: FreeAddr(t)}
	if o.Unix {
		d.Socket = filepath.Join(dir, "clamd.sock")
	}
	conf := writeConfig(t, dir, d, o)
	d.cmd = exec.Command(bin, "--config-file="+conf)
	log, err := os.Create(filepath.Join(dir, "clamd.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	d.cmd.Stdout, d.cmd.Stderr = log, log
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	if err := waitReady(d.Addr); err != nil {
		out, _ := os.ReadFile(filepath.Join(dir, "clamd.out"))
		t.Fatalf("clamd did not answer PING: %v\n%s", err, out)
	}
	return d
}

func writeConfig(t testing.TB, dir string, d *Daemon, o Options) string {
	t.Helper()
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(db, "test.hdb"), []byte(HDB), 0o644); err != nil {
		t.Fatal(err)
	}
	max := o.StreamMaxLength
	if max == "" {
		max = "2000M"
	}
	host, port, _ := net.SplitHostPort(d.Addr)
	lines := []string{
		"DatabaseDirectory " + db, "TCPAddr " + host, "TCPSocket " + port, "Foreground yes",
		"StreamMaxLength " + max, "MaxFileSize 2000M", "MaxScanSize 2000M",
		"TemporaryDirectory " + dir, "LogFile " + filepath.Join(dir, "clamd.log"),
	}
	if d.Socket != "" {
		lines = append(lines, "LocalSocket "+d.Socket)
	}
	conf := filepath.Join(dir, "clamd.conf")
	if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// FreeAddr returns a loopback address nothing listens on (for a moment): where a
// daemon is started, or a clamd that is down.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func waitReady(addr string) error {
	cfg := clamd.DefaultConfig()
	cfg.Addr, cfg.Timeout = addr, time.Second
	c, err := clamd.New(cfg)
	if err != nil {
		return err
	}
	var last error
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if last = c.Ping(context.Background()); last == nil {
			return nil
		}
	}
	return fmt.Errorf("after 20s: %w", last)
}
