package e2e

import (
	"context"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coffer/coffer/virusscan/clamd/clamdtest"
)

// TestVirusScanE2E: the built binary, given --clamav-addr (env), says so at start,
// refuses EICAR with 403 and hasura-storage's data (the file's name and the
// signature), and stores clean files.
func TestVirusScanE2E(t *testing.T) {
	addr := clamdtest.Addr(t)
	p := launch(t, "COFFER_DATA_DIR="+t.TempDir(), "COFFER_CLAMAV_ADDR="+addr, "COFFER_LOG_LEVEL=info")
	p.waitHealthy()
	if !strings.Contains(p.logs.String(), `"msg":"virus scanning on"`) {
		t.Fatalf("no start log of scanning; logs:\n%s", p.logs)
	}
	_, err := p.uploadStream(context.Background(), "eicar.com", strings.NewReader(clamdtest.EICAR))
	if err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "virus found: "+clamdtest.Signature) {
		t.Fatalf("EICAR upload: %v", err)
	}
	if want := `"data":{"file":"eicar.com","virus":"` + clamdtest.Signature + `"}`; !strings.Contains(err.Error(), want) {
		t.Fatalf("EICAR upload: %v, want %s", err, want)
	}
	if _, err := p.uploadStream(context.Background(), "clean.bin", newGen(1<<20, 7)); err != nil {
		t.Fatal(err)
	}
	if n := len(p.listAll("default")); n != 1 {
		t.Fatalf("%d files listed, want 1", n)
	}
}

// TestLargeUploadScanned (opt-in: COFFER_E2E_LARGE_MB) uploads a large clean file
// through servers with and without virus scanning, alternating, each on a fresh
// process (COFFER_E2E_SCAN_ROUNDS rounds, default 3), and reports the medians and the
// throughput ratio. The server's peak RSS must stay within 64 MB with scanning on.
func TestLargeUploadScanned(t *testing.T) {
	mb, _ := strconv.ParseInt(os.Getenv("COFFER_E2E_LARGE_MB"), 10, 64)
	if mb <= 0 {
		t.Skip("set COFFER_E2E_LARGE_MB (e.g. 1024) to run")
	}
	rounds := 3
	if s := os.Getenv("COFFER_E2E_SCAN_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	d := clamdtest.Start(t, clamdtest.Options{StreamMaxLength: "2000M"})
	size := mb << 20
	var durs, rss [2][]float64 // [off, on]
	for r := 0; r < rounds; r++ {
		for side, env := range [][]string{nil, {"COFFER_CLAMAV_ADDR=" + d.Addr}} {
			dur, peak := uploadOnce(t, size, env)
			durs[side] = append(durs[side], dur.Seconds())
			rss[side] = append(rss[side], float64(peak>>20))
			t.Logf("round %d scan=%v: %.2fs (%.0f MB/s), peak RSS %d MB", r+1, side == 1, dur.Seconds(),
				float64(mb)/dur.Seconds(), peak>>20)
			if side == 1 && peak > 64<<20 {
				t.Errorf("peak RSS %d MB with scanning on, want at most 64 MB", peak>>20)
			}
		}
	}
	off, on := median(durs[0]), median(durs[1])
	t.Logf("%d MB, %d rounds, medians: scan off %.2fs (%.0f MB/s, peak RSS %.0f MB), scan on %.2fs (%.0f MB/s, peak RSS %.0f MB); throughput on/off %.2fx",
		mb, rounds, off, float64(mb)/off, median(rss[0]), on, float64(mb)/on, median(rss[1]), off/on)
}

func uploadOnce(t *testing.T, size int64, env []string) (time.Duration, int64) {
	p := start(t, append([]string{"COFFER_DATA_DIR=" + t.TempDir()}, env...)...)
	defer p.stop()
	p.unlimitDefaultBucket()
	t0 := time.Now()
	f, err := p.uploadStream(context.Background(), "large.bin", newGen(size, 42))
	if err != nil {
		t.Fatal(err)
	}
	dur := time.Since(t0)
	if f.Size != size {
		t.Fatalf("stored %d bytes, want %d", f.Size, size)
	}
	return dur, p.peakRSS()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
