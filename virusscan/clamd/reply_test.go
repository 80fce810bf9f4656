package clamd_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/coffer/coffer/virusscan"
	"github.com/coffer/coffer/virusscan/clamd"
)

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		reply string
		sig   string // "" clean
		err   error
	}{
		{"stream: OK", "", nil},
		{"stream: OK\x00", "", nil},
		{"stream: Eicar-Test-Signature FOUND", "Eicar-Test-Signature", nil},
		{"1: stream: Win.Test.EICAR_HDB-1 FOUND\n", "Win.Test.EICAR_HDB-1", nil},
		{"stream: Bad\x01Name\xff FOUND", "Bad?Name?", nil},
		{"INSTREAM size limit exceeded. ERROR", "", virusscan.ErrTooLarge},
		{"stream: Can't allocate memory ERROR", "", virusscan.ErrUnavailable},
		{"stream:  FOUND", "", virusscan.ErrUnavailable},
		{"FOUND", "", virusscan.ErrUnavailable},
		{"PONG", "", virusscan.ErrUnavailable},
		{"", "", virusscan.ErrUnavailable},
	} {
		v, err := clamd.ParseReply(tc.reply)
		if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
			t.Errorf("%q: error %v, want %v", tc.reply, err, tc.err)
			continue
		}
		if v.Infected != (tc.sig != "") || v.Signature != tc.sig {
			t.Errorf("%q: %+v, want signature %q", tc.reply, v, tc.sig)
		}
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"stream: OK", "stream: Eicar-Test-Signature FOUND", "INSTREAM size limit exceeded. ERROR",
		"1: stream: x FOUND", "x ERROR", ": FOUND", "stream: \xff FOUND"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		v, err := clamd.ParseReply(reply)
		if err != nil {
			if v.Infected || !(errors.Is(err, virusscan.ErrUnavailable) || errors.Is(err, virusscan.ErrTooLarge)) {
				t.Fatalf("%q: %+v with %v", reply, v, err)
			}
			return
		}
		if !v.Infected {
			if v.Signature != "" {
				t.Fatalf("%q: clean with a signature %q", reply, v.Signature)
			}
			return
		}
		if v.Signature == "" || len(v.Signature) > 200 || strings.TrimSpace(v.Signature) != v.Signature {
			t.Fatalf("%q: signature %q", reply, v.Signature)
		}
		for i := 0; i < len(v.Signature); i++ {
			if c := v.Signature[i]; c < 0x20 || c > 0x7e {
				t.Fatalf("%q: signature %q has byte %#x", reply, v.Signature, c)
			}
		}
	})
}
