// Package virusscan defines how uploads are checked for malware while they stream: a
// Scanner opens a Stream per upload, the upload's bytes are written to it as they
// arrive (never buffered whole), and Finish gives the verdict.
package virusscan

import (
	"context"
	"errors"
	"io"
)

// Scanner checks byte streams for malware.
type Scanner interface {
	// Begin opens a scan of one upload. It fails (wrapping ErrUnavailable) when the
	// scanner cannot be reached.
	Begin(ctx context.Context) (Stream, error)
	// Ping checks that the scanner answers; errors wrap ErrUnavailable.
	Ping(ctx context.Context) error
}

// Stream is one scan in progress. Write sends bytes to the scanner, with
// backpressure; Finish ends the stream and returns the verdict; Close releases the
// stream (always call it; after Finish it does nothing).
type Stream interface {
	io.Writer
	// Finish returns the verdict: Verdict.Infected with the signature, or clean. Errors
	// wrap ErrUnavailable (scanner down, timeout, protocol error) or ErrTooLarge. Only
	// an answer to the whole stream is clean: "clean" said before the end is an error.
	Finish() (Verdict, error)
	Close() error
}

// Verdict is the outcome of a completed scan.
type Verdict struct {
	Infected  bool
	Signature string // the name of what was found, e.g. "Eicar-Test-Signature"
}

var (
	// ErrUnavailable: the scanner could not be reached or did not answer properly.
	ErrUnavailable = errors.New("virus scanner unavailable")
	// ErrTooLarge: the stream is longer than the scanner accepts.
	ErrTooLarge = errors.New("stream longer than the virus scanner accepts")
	// ErrVerdict is what Write returns once the scanner has answered before the end
	// of the stream (it found something and closed it): stop writing and call Finish.
	ErrVerdict = errors.New("the virus scanner answered before the end of the stream")
)
