package blob

import "os"

// Optional capabilities. A driver, or a Reader it returns, implements one of these when
// it can do more than the Driver contract; callers find them with As, which looks
// through wrappers (the Store's counting reader, any ReaderWrapper or DriverWrapper), so
// a wrapper never hides a capability of what it wraps. Name a new capability here, with
// its contract, rather than asserting an anonymous interface where it is used.
//
// Capabilities of a Driver: Sweeper, Multipart (multipart.go).
// Capabilities of a Reader: OSFiler, FileSender.

// OSFiler is implemented by readers backed by an open *os.File (fsblob), so an HTTP
// server can hand the file to http.ServeContent and the kernel sends it (sendfile).
// OSFile returns the file positioned where the reader is; the caller must not close it.
type OSFiler interface {
	OSFile() *os.File
}

// FileSender is implemented by readers over a file shared with other readers (the
// content cache's open files), which keep their own offset instead of the file's.
// SendFile returns the file, the reader's offset, and advance, which the caller calls
// with the number of bytes it sent from off so the reader's offset moves past them.
type FileSender interface {
	SendFile() (f *os.File, off int64, advance func(int64))
}

// ReaderWrapper is implemented by Readers that wrap another Reader (counting, caching);
// Unwrap returns the wrapped one.
type ReaderWrapper interface {
	Unwrap() Reader
}

// DriverWrapper is implemented by Drivers that wrap another Driver (tracing, quotas);
// Unwrap returns the wrapped one. blob.Store is none: see Store.Driver.
type DriverWrapper interface {
	Unwrap() Driver
}

// Innermost returns the Reader under every ReaderWrapper around r.
func Innermost(r Reader) Reader {
	for {
		w, ok := r.(ReaderWrapper)
		if !ok {
			return r
		}
		r = w.Unwrap()
	}
}

// As returns v, or the first Reader or Driver found by unwrapping it (ReaderWrapper,
// DriverWrapper), that implements T, and whether there was one. T is one of the
// capability interfaces, e.g. blob.As[blob.OSFiler](r).
func As[T any](v any) (T, bool) {
	for {
		if t, ok := v.(T); ok {
			return t, true
		}
		switch w := v.(type) {
		case ReaderWrapper:
			v = w.Unwrap()
		case DriverWrapper:
			v = w.Unwrap()
		default:
			var zero T
			return zero, false
		}
	}
}
