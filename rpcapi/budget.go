package rpcapi

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
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
// messages and in bytes after decompression, and bounded per stream and per
// connection (Budget); a call over either bound ends with RESOURCE_EXHAUSTED.
// Reflection and health stay open to anonymous callers (grpcurl needs no
// credential to list and describe), but their messages may not decode past 16 KiB
// (smallMessage, handler.go): their requests are names.
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
	// theirs is decoded. The anonymous callers of a connection are one caller, and
	// so are those with failed credentials; each authenticated principal (role and
	// user id) is its own.
	ConnMessages int
	ConnBytes    int64
	ConnWindow   time.Duration
}

// DefaultBudget is generous for what the streams are for (a grpcurl session sends
// a few dozen small reflection requests) and stops a stream of gzip bombs at about
// 1 MiB decoded (a few ms of CPU); a caller may have 32 MiB decoded a minute on one
// connection (an admin sending 1 MiB rules documents, 32 of them; at worst about
// 0.4 s of CPU).
func DefaultBudget() Budget {
	return Budget{StreamMessages: 1024, StreamBytes: 1 << 20, ConnMessages: 4096, ConnBytes: 32 << 20, ConnWindow: time.Minute}
}

// Validate checks b.
func (b Budget) Validate() error {
	if b.StreamMessages < 0 || b.StreamBytes < 0 || b.ConnMessages < 0 || b.ConnBytes < 0 ||
		(b.ConnMessages > 0 || b.ConnBytes > 0) && b.ConnWindow <= 0 {
		return coffer.Errorf(coffer.EINVALID, "rpc: a budget must not be negative, and a connection's needs a window")
	}
	return nil
}

// connBudgetKey is the context key of a connection's usage.
type connBudgetKey struct{}

// ConnContext is (part of) http.Server.ConnContext for the server that mounts the
// face: it gives each connection the usage its Budget is counted in. Without it,
// only the per-stream bounds hold.
func ConnContext(ctx context.Context, _ net.Conn) context.Context {
	return context.WithValue(ctx, connBudgetKey{}, &connUsage{})
}

// connUsage is what one connection's calls had decoded, by caller: an HTTP/2
// connection from a proxy carries many clients' calls, and one caller over its
// budget must not have the others refused. Anonymous callers (and failed
// credentials) are one caller.
type connUsage struct {
	mu sync.Mutex
	by map[string]*usage
}

// maxCallers bounds the callers counted apart on one connection; further ones share
// one usage.
const maxCallers = 64

// usage is what a caller had decoded, leaking away at the budget's rate: a leaky
// bucket, one for messages and one for bytes.
type usage struct {
	msgs, bytes float64
	at          time.Time
}

// add counts msgs and bytes for caller who and reports whether who is still
// within b.
func (c *connUsage) add(b Budget, who string, msgs int, bytes int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	u := c.by[who]
	if u == nil {
		if c.by == nil {
			c.by = map[string]*usage{}
		}
		if len(c.by) >= maxCallers {
			who = "\x00more"
		}
		if u = c.by[who]; u == nil {
			u = &usage{}
			c.by[who] = u
		}
	}
	now := time.Now()
	if !u.at.IsZero() {
		f := float64(now.Sub(u.at)) / float64(b.ConnWindow)
		u.msgs = max(0, u.msgs-f*float64(b.ConnMessages))
		u.bytes = max(0, u.bytes-f*float64(b.ConnBytes))
	}
	u.at = now
	u.msgs += float64(msgs)
	u.bytes += float64(bytes)
	return (b.ConnMessages == 0 || u.msgs <= float64(b.ConnMessages)) && (b.ConnBytes == 0 || u.bytes <= float64(b.ConnBytes))
}

// connCaller is where ctx's call is counted: its connection's usage (nil if none)
// and its caller there.
type connCaller struct {
	u   *connUsage
	who string
}

// callerOf returns where ctx's call is counted.
func callerOf(ctx context.Context) connCaller {
	u, _ := ctx.Value(connBudgetKey{}).(*connUsage)
	who := ""
	if p := principal(ctx); p != nil && !p.Anonymous {
		who = p.Role + "\x00" + p.UserID
	}
	return connCaller{u, who}
}

// add counts msgs and bytes and reports whether the caller is still within b.
func (c connCaller) add(b Budget, msgs int, bytes int64) bool {
	return c.u == nil || c.u.add(b, c.who, msgs, bytes)
}

// errConnBudget is the refusal of a call whose caller is over its connection's
// budget.
func errConnBudget(b Budget) error {
	return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"this connection has sent more than its budget (%d stream messages, %d bytes decoded, per %v): slow down or reconnect later",
		b.ConnMessages, b.ConnBytes, b.ConnWindow))
}

// gate refuses a call whose caller is over its connection's budget, before any of
// its messages is read (connect.WithRequestGate).
func (b Budget) gate(ctx context.Context, _ connect.Spec, _ connect.Peer, _ http.Header) (context.Context, error) {
	if !callerOf(ctx).add(b, 0, 0) {
		return nil, errConnBudget(b)
	}
	return ctx, nil
}

// A call whose messages were decoded but never reached the interceptor (a unary
// call of two messages, refused after both were decoded; a bomb that inflates to
// something that is not a message) is not counted by it: such a call is counted
// when it ends, at the most it may have decoded, from the bytes read of its body.

// maxInflation is the most DEFLATE inflates a byte to (1032:1).
const maxInflation = 1032

// callKey is the context key of a call's tally.
type callKey struct{}

// callTally is what one request of the face read of its body, and whether the
// interceptor counted its messages.
type callTally struct {
	read    atomic.Int64
	counted atomic.Bool
}

// markCounted records in ctx's call that the interceptor counted it.
func markCounted(ctx context.Context) {
	if c, _ := ctx.Value(callKey{}).(*callTally); c != nil {
		c.counted.Store(true)
	}
}

// tallied returns r with its body counted and its tally in its context, and the
// function that counts the call, when it has ended, if the interceptor did not:
// at the body's bytes, or for a compressed body at maxInflation times them up to
// two messages of maxMsg (a unary call's message and the one more it was refused
// for).
func (b Budget) tallied(r *http.Request, maxMsg int) (*http.Request, func()) {
	c := &callTally{}
	ctx := context.WithValue(r.Context(), callKey{}, c)
	r = r.WithContext(ctx)
	r.Body = &countedBody{ReadCloser: r.Body, n: &c.read}
	compressed := compressed(r.Header)
	return r, func() {
		if c.counted.Load() {
			return
		}
		n := c.read.Load()
		if compressed {
			n = min(n*maxInflation, 2*(int64(maxMsg)+1))
		}
		callerOf(ctx).add(b, 0, n)
	}
}

// compressed reports whether a request's messages may be compressed, in any of the
// face's protocols.
func compressed(h http.Header) bool {
	for _, k := range []string{"Grpc-Encoding", "Content-Encoding", "Connect-Content-Encoding"} {
		if v := h.Get(k); v != "" && v != "identity" {
			return true
		}
	}
	return false
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
		if !callerOf(ctx).add(i.b, 0, int64(unstamp(req.Any()))) {
			return nil, errConnBudget(i.b)
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
	if !c.conn.add(c.b, 1, n) {
		return errConnBudget(c.b)
	}
	return nil
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
