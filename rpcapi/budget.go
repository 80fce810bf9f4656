package rpcapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/coffer/coffer"
)

// The per-message limit (limits.go) does not bound a stream: one reflection stream
// of small gzipped messages, each inflating a thousandfold, had the server inflate
// and decode 2 GiB (about 7.5 s of CPU) for 2 MiB sent, and an HTTP/2 connection
// carries any number of streams and calls. So what the face decodes is counted, in
// messages and in bytes after decompression, and bounded per stream, per caller on
// a connection, and for anonymous callers per source address over all their
// connections (Budget); a call over a bound ends with RESOURCE_EXHAUSTED.
//
// A call is admitted or refused before any of its messages is read (gate,
// handler.go): failed credentials, an anonymous call of a method that needs
// credentials, a caller over its budget. Anonymous callers reach only reflection
// and health (grpcurl needs no credential to list and describe; their messages may
// not decode past 16 KiB: smallMessage, handler.go), ServerService.GetVersion (16
// KiB too) and FileService, whose methods the anonymous role's rules govern as
// /v1's.
//
// The bytes are counted exactly where they are known, in the codec (codec.go): it
// stamps each request message it decodes with the size it decoded, as a trailing
// unknown field that the interceptor below takes off before a method sees the
// message. connect-go gives neither its codecs nor its decompressors the call's
// context; the message is what they share with the interceptor.

// Budget bounds what the face decodes. Its zero value turns the bounds off.
type Budget struct {
	// StreamMessages and StreamBytes bound one streaming call (reflection, health
	// watches): the messages it receives and their bytes after decompression.
	StreamMessages int
	StreamBytes    int64
	// ConnMessages and ConnBytes bound each caller on one connection (an HTTP/2 one,
	// or an HTTP/1.1 one) over ConnWindow, refilled evenly: the stream messages it
	// sent and the bytes decoded for all its calls, unary ones included. Once a
	// caller is over, its calls on that connection are refused before a byte of
	// theirs is decoded. The anonymous callers of a connection are one caller; each
	// authenticated principal (its tenant, role and user id) is its own, and so is
	// the platform admin.
	ConnMessages int
	ConnBytes    int64
	// AddrMessages and AddrBytes bound the anonymous callers of one source address
	// (the peer's IPv4 address or IPv6 /64) over all their connections, over
	// ConnWindow as well; they need Sources.ConnContext. Behind a proxy, every
	// anonymous client of the proxy is one source.
	AddrMessages int
	AddrBytes    int64
	ConnWindow   time.Duration
}

// DefaultBudget is generous for what the streams are for (a grpcurl session sends
// a few dozen small reflection requests) and stops a stream of gzip bombs at about
// 1 MiB decoded (a few ms of CPU); a caller may have 32 MiB decoded a minute on one
// connection (an admin sending 1 MiB rules documents, 32 of them; at worst about
// 0.4 s of CPU), and the anonymous callers of one address as much over all their
// connections.
func DefaultBudget() Budget {
	return Budget{StreamMessages: 1024, StreamBytes: 1 << 20, ConnMessages: 4096, ConnBytes: 32 << 20,
		AddrMessages: 4096, AddrBytes: 32 << 20, ConnWindow: time.Minute}
}

// Validate checks b.
func (b Budget) Validate() error {
	if b.StreamMessages < 0 || b.StreamBytes < 0 || b.ConnMessages < 0 || b.ConnBytes < 0 || b.AddrMessages < 0 ||
		b.AddrBytes < 0 || (b.conn().on() || b.addr().on()) && b.ConnWindow <= 0 {
		return coffer.Errorf(coffer.EINVALID, "rpc: a budget must not be negative, and a connection's or an address's needs a window")
	}
	return nil
}

// rate is one leaky bucket's bound: what may be had over window.
type rate struct {
	msgs   int
	bytes  int64
	window time.Duration
}

// conn and addr are b's bounds of a caller on a connection and of an address.
func (b Budget) conn() rate { return rate{b.ConnMessages, b.ConnBytes, b.ConnWindow} }
func (b Budget) addr() rate { return rate{b.AddrMessages, b.AddrBytes, b.ConnWindow} }

// on reports whether r bounds anything.
func (r rate) on() bool { return r.msgs > 0 || r.bytes > 0 }

// connBudgetKey is the context key of a connection's usage.
type connBudgetKey struct{}

// Sources is what the anonymous callers of each source address had decoded, over
// all their connections to one server (and every tenant's face on it).
type Sources struct{ addrs usages[netip.Prefix] }

// maxSources bounds the addresses counted apart (about 150 bytes each).
const maxSources = 4096

// NewSources returns an empty Sources.
func NewSources() *Sources { return &Sources{addrs: usages[netip.Prefix]{max: maxSources}} }

// ConnContext is (part of) http.Server.ConnContext for the server that mounts the
// face: it gives each connection the usage its Budget is counted in, and its source
// address in s. Without it, only the per-stream bounds hold.
func (s *Sources) ConnContext(ctx context.Context, c net.Conn) context.Context {
	u := &connUsage{callers: usages[string]{max: maxCallers}, sources: s, addr: sourceOf(c.RemoteAddr())}
	return context.WithValue(ctx, connBudgetKey{}, u)
}

// sourceOf is the source address a peer's anonymous calls are counted at: its IPv4
// address, or its IPv6 /64 (what one host usually has); the zero prefix for a peer
// that is no IP address (a Unix socket: a local proxy).
func sourceOf(a net.Addr) netip.Prefix {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Prefix{}
	}
	ip, bits := ap.Addr().Unmap().WithZone(""), 32
	if ip.Is6() {
		bits = 64
	}
	p, _ := ip.Prefix(bits)
	return p
}

// connUsage is what one connection's calls had decoded, by caller: an HTTP/2
// connection from a proxy carries many clients' calls, and one caller over its
// budget must not have the others refused. Anonymous callers (key "") are one
// caller, whose calls also count at their source address, addr in sources.
type connUsage struct {
	callers usages[string]
	sources *Sources
	addr    netip.Prefix
}

// maxCallers bounds the callers counted apart on one connection.
const maxCallers = 64

// usages are leaky buckets by key, at most max of them. A new key past max makes
// room (evict) rather than share a bucket: no caller can spend another's budget.
// The zero key (anonymous callers; an address that is no IP) is never dropped.
type usages[K comparable] struct {
	mu  sync.Mutex
	by  map[K]*usage
	max int
}

// usage is what a caller had decoded, leaking away at its rate: a leaky bucket, one
// for messages and one for bytes.
type usage struct {
	msgs, bytes float64
	at          time.Time // its last use
}

// leaked returns u's counts at now, having leaked at r since its last use.
func (u *usage) leaked(r rate, now time.Time) (msgs, bytes float64) {
	f := float64(now.Sub(u.at)) / float64(r.window)
	return max(0, u.msgs-f*float64(r.msgs)), max(0, u.bytes-f*float64(r.bytes))
}

// add counts msgs and bytes for key k and reports whether k is still within r.
func (t *usages[K]) add(r rate, k K, msgs int, bytes int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	u := t.by[k]
	if u == nil {
		if t.by == nil {
			t.by = map[K]*usage{}
		}
		if len(t.by) >= t.max {
			t.evict(r, now)
		}
		u = &usage{at: now}
		t.by[k] = u
	}
	u.msgs, u.bytes = u.leaked(r, now)
	u.at = now
	u.msgs += float64(msgs)
	u.bytes += float64(bytes)
	return (r.msgs == 0 || u.msgs <= float64(r.msgs)) && (r.bytes == 0 || u.bytes <= float64(r.bytes))
}

// evict makes room for one more key: it drops every bucket that has leaked empty
// (a new one would be the same), or if none has, the one used longest ago. The
// latter gives that key a whole budget when it comes back: a caller that cycles
// through more than max keys to have that happen to its own needs as many
// principals (it could as well open another connection) or addresses.
func (t *usages[K]) evict(r rate, now time.Time) {
	var zero, oldest K
	var at time.Time
	n := len(t.by)
	for k, u := range t.by {
		if k == zero {
			continue
		}
		if m, b := u.leaked(r, now); m == 0 && b == 0 {
			delete(t.by, k)
		} else if at.IsZero() || u.at.Before(at) {
			oldest, at = k, u.at
		}
	}
	if len(t.by) == n && !at.IsZero() {
		delete(t.by, oldest)
	}
}

// connCaller is where a call is counted: its connection's usage (nil if none) and
// its caller there ("": anonymous).
type connCaller struct {
	u   *connUsage
	who string
}

// callerOf returns where ctx's call is counted.
func callerOf(ctx context.Context) connCaller {
	if c, _ := ctx.Value(callKey{}).(*callTally); c != nil {
		return c.caller
	}
	return connCaller{}
}

// add counts msgs and bytes and returns the refusal of a caller over b: over its
// connection's budget or, anonymous, its address's.
func (c connCaller) add(b Budget, msgs int, bytes int64) error {
	if c.u == nil {
		return nil
	}
	var err error
	if r := b.conn(); r.on() && !c.u.callers.add(r, c.who, msgs, bytes) {
		err = errConnBudget(b)
	}
	if r := b.addr(); c.who == "" && c.u.sources != nil && r.on() && !c.u.sources.addrs.add(r, c.u.addr, msgs, bytes) && err == nil {
		err = connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the anonymous calls from this address have sent more than their budget (%d stream messages, %d bytes decoded, per %v): slow down, or call with credentials",
			b.AddrMessages, b.AddrBytes, b.ConnWindow))
	}
	return err
}

// errConnBudget is the refusal of a call whose caller is over its connection's
// budget.
func errConnBudget(b Budget) error {
	return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"this connection has sent more than its budget (%d stream messages, %d bytes decoded, per %v): slow down or reconnect later",
		b.ConnMessages, b.ConnBytes, b.ConnWindow))
}

// A call whose messages were decoded but never reached the interceptor (a unary
// call of two messages, refused after both were decoded; a bomb that inflates to
// something that is not a message) is not counted by it: such a call is counted
// when it ends, at the most it may have decoded, from the bytes read of its body.

// maxInflation is the most DEFLATE inflates a byte to (1032:1).
const maxInflation = 1032

// callKey is the context key of a call's tally.
type callKey struct{}

// callTally is where one request of the face is counted, what it read of its body,
// and whether its messages were counted (by the interceptor; or none was decoded:
// the gate refused it).
type callTally struct {
	caller  connCaller
	read    atomic.Int64
	counted atomic.Bool
}

// markCounted records in ctx's call that the interceptor counted it.
func markCounted(ctx context.Context) {
	if c, _ := ctx.Value(callKey{}).(*callTally); c != nil {
		c.counted.Store(true)
	}
}

// tallied returns r with its body counted and its tally, for caller who of its
// connection, in its context, and the function that counts the call, when it has
// ended, if the interceptor did not: at the bytes read of its body (and of its URL,
// which holds the message of a Connect GET), or for a compressed message at
// maxInflation times them up to two messages of maxMsg (a unary call's message and
// the one more it was refused for).
func (b Budget) tallied(r *http.Request, who string, maxMsg int) (*http.Request, func()) {
	u, _ := r.Context().Value(connBudgetKey{}).(*connUsage)
	c := &callTally{caller: connCaller{u, who}}
	r = r.WithContext(context.WithValue(r.Context(), callKey{}, c))
	r.Body = &countedBody{ReadCloser: r.Body, n: &c.read}
	compressed, query := compressed(r), int64(len(r.URL.RawQuery))
	return r, func() {
		if c.counted.Load() {
			return
		}
		n := c.read.Load() + query
		if compressed {
			n = min(n*maxInflation, 2*(int64(maxMsg)+1))
		}
		_ = c.caller.add(b, 0, n)
	}
}

// compressed reports whether a request's messages may be compressed, in any of the
// face's protocols.
func compressed(r *http.Request) bool {
	for _, k := range []string{"Grpc-Encoding", "Content-Encoding", "Connect-Content-Encoding"} {
		if v := r.Header.Get(k); v != "" && v != "identity" {
			return true
		}
	}
	return r.Method == http.MethodGet && r.URL.Query().Get("compression") != ""
}

// countedBody counts the bytes read of a body.
type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

// Read reads into p, counting.
func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// budgetInterceptor takes the codec's stamps off the request messages and counts
// them: a unary call's against its connection, a stream's against the stream and
// its connection.
type budgetInterceptor struct{ b Budget }

// WrapUnary counts a unary call's request (decoded before interceptors run).
func (i budgetInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		markCounted(ctx)
		if err := callerOf(ctx).add(i.b, 0, int64(unstamp(req.Any()))); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

// WrapStreamingClient leaves clients alone.
func (i budgetInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler counts each message a stream receives.
func (i budgetInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		markCounted(ctx) // but for the message that ends it, if it does not decode
		return next(ctx, &budgetedConn{StreamingHandlerConn: conn, b: i.b, conn: callerOf(ctx)})
	}
}

// budgetedConn is a stream that counts what it receives.
type budgetedConn struct {
	connect.StreamingHandlerConn
	b     Budget
	conn  connCaller
	msgs  int
	bytes int64
}

// Receive receives msg, and fails once the stream or its connection is over
// budget.
func (c *budgetedConn) Receive(msg any) error {
	if err := c.StreamingHandlerConn.Receive(msg); err != nil {
		return err
	}
	n := int64(unstamp(msg))
	c.msgs++
	c.bytes += n
	if c.b.StreamMessages > 0 && c.msgs > c.b.StreamMessages || c.b.StreamBytes > 0 && c.bytes > c.b.StreamBytes {
		return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
			"the stream is over its budget (%d messages, %d bytes decoded)", c.b.StreamMessages, c.b.StreamBytes))
	}
	return c.conn.add(c.b, 1, n)
}

// stampField is the field number of a decoded message's size stamp: the largest
// valid one, which the contract leaves unused.
const stampField = protowire.MaxValidNumber

// stampLen is the length of a stamp: its tag and a fixed64.
var stampLen = protowire.SizeTag(stampField) + protowire.SizeFixed64()

// stamp records on m that decoding it took n bytes.
func stamp(m any, n int) {
	pm, ok := m.(proto.Message)
	if !ok {
		return
	}
	r := pm.ProtoReflect()
	u := r.GetUnknown()
	u = protowire.AppendTag(u[:len(u):len(u)], stampField, protowire.Fixed64Type)
	r.SetUnknown(protowire.AppendFixed64(u, uint64(n)))
}

// unstamp takes m's stamp off and returns its size, 0 if m has none (an empty
// message, which connect-go does not decode).
func unstamp(m any) int {
	pm, ok := m.(proto.Message)
	if !ok {
		return 0
	}
	r := pm.ProtoReflect()
	u := r.GetUnknown()
	if len(u) < stampLen {
		return 0
	}
	tail := u[len(u)-stampLen:]
	num, typ, n := protowire.ConsumeTag(tail)
	if n < 0 || num != stampField || typ != protowire.Fixed64Type {
		return 0
	}
	size, _ := protowire.ConsumeFixed64(tail[n:])
	rest := u[:len(u)-stampLen]
	if len(rest) == 0 {
		rest = nil
	}
	r.SetUnknown(rest)
	return int(size)
}
