package webhook

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/coffer/coffer"
)

// failingResolver fails every lookup with err.
type failingResolver struct{ err error }

func (f failingResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return nil, f.err
}

// TestCheckTargetFailsClosed (D9): at creation a name that does not resolve is
// EINVALID, a failing lookup EUNAVAILABLE, a name resolving to a refused address
// EFORBIDDEN; names resolving to public addresses and IP literals pass. Before the
// fix names were not resolved at creation, so each was accepted.
func TestCheckTargetFailsClosed(t *testing.T) {
	ctx := context.Background()
	g := NewGuard(GuardConfig{}, guardTestResolver().then("nip.test"), (&guardRecorder{}).dial)
	for raw, want := range map[string]string{
		"http://127.0.0.1.nip.io/":                     coffer.EINVALID, // unknown to the stub: NXDOMAIN
		"http://nip.test/":                             coffer.EINVALID, // resolves to no address
		"http://loopback.test/":                        coffer.EFORBIDDEN,
		"http://metadata.test/":                        coffer.EFORBIDDEN,
		"http://mixed.test/":                           coffer.EFORBIDDEN,
		"http://example.test:8443/x":                   "",
		"http://93.184.216.34/":                        "",
		"http://[2606:2800:220:1:248:1893:25c8:1946]/": "",
	} {
		if got := coffer.ErrorCode(g.CheckTarget(ctx, raw)); got != want {
			t.Errorf("CheckTarget(%s) = %q, want %q", raw, got, want)
		}
	}
	down := NewGuard(GuardConfig{}, failingResolver{&net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}}, nil)
	if err := down.CheckTarget(ctx, "http://example.test/"); coffer.ErrorCode(err) != coffer.EUNAVAILABLE {
		t.Errorf("failing resolver: %v, want EUNAVAILABLE", err)
	}
}

// TestMetadataNamesRefused (D9): cloud metadata names are refused at creation
// without a lookup, and at dial time before any lookup, even when Allow covers
// every address (a development setup) and the resolver answers them.
func TestMetadataNamesRefused(t *testing.T) {
	res := newGuardResolver(map[string][]string{"metadata.google.internal": {"169.254.169.254"},
		"instance-data.us-west-2.compute.internal": {"169.254.169.254"}, "metadata": {"8.8.8.8"}})
	rec := &guardRecorder{}
	all := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	g := NewGuard(GuardConfig{Allow: all}, res, rec.dial)
	for _, host := range []string{"metadata.google.internal", "Metadata.Google.Internal.", "metadata", "metadata.goog",
		"instance-data", "instance-data.ec2.internal", "instance-data.us-west-2.compute.internal", "metadata.tencentyun.com"} {
		if err := g.CheckTarget(context.Background(), "http://"+host+"/"); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
			t.Errorf("CheckTarget(%s) = %v, want EFORBIDDEN", host, err)
		}
		if _, err := g.DialContext(context.Background(), "tcp", host+":80"); coffer.ErrorCode(err) != coffer.EFORBIDDEN {
			t.Errorf("DialContext(%s) = %v, want EFORBIDDEN", host, err)
		}
	}
	if len(rec.dialed()) != 0 || len(res.calls) != 0 {
		t.Fatalf("dialed %v, looked up %v", rec.dialed(), res.calls)
	}
}

// TestDialRefusesNameOnceResolved (D9): a name accepted at creation (it resolved to
// a public address, or would not resolve then) is refused at dial time once it
// resolves to a loopback, private or link-local address: nothing is dialed.
func TestDialRefusesNameOnceResolved(t *testing.T) {
	res := newGuardResolver(map[string][]string{"127.0.0.1.nip.io": {"127.0.0.1"}, "10.0.0.1.nip.io": {"10.0.0.1"},
		"link.test": {"169.254.10.1"}}).then("rebind.test", "93.184.216.34").then("rebind.test", "127.0.0.1")
	rec := &guardRecorder{}
	g := NewGuard(GuardConfig{}, res, rec.dial)
	if err := g.CheckTarget(context.Background(), "http://rebind.test/"); err != nil {
		t.Fatalf("rebind.test at creation: %v", err)
	}
	for _, host := range []string{"127.0.0.1.nip.io", "10.0.0.1.nip.io", "link.test", "rebind.test"} {
		_, err := g.DialContext(context.Background(), "tcp", host+":443")
		if coffer.ErrorCode(err) != coffer.EFORBIDDEN || errors.Is(err, errGuardRecorded) {
			t.Errorf("DialContext(%s) = %v, want EFORBIDDEN", host, err)
		}
	}
	if d := rec.dialed(); len(d) != 0 {
		t.Fatalf("dialed %v", d)
	}
}
