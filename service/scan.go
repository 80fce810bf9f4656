package service

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/internal/timing"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/virusscan"
)

// Scanning is what virus scanning of uploads needs.
type Scanning struct {
	// Scanner checks every upload and replace as it streams; nil: no scanning.
	Scanner virusscan.Scanner
	// Rejections records each refusal (and its file.rejected event) and lists them.
	Rejections meta.Rejections
	// FailOpen stores uploads unscanned (logging a warning) when the scanner is
	// unavailable, instead of refusing them with 503.
	FailOpen bool
}

// SetScanning configures virus scanning. Call it before the service is used.
func (s *Service) SetScanning(sc Scanning) { s.scanning = &sc }

// Scanning reports whether uploads are scanned.
func (s *Service) Scanning() bool { return s.scanning != nil && s.scanning.Scanner != nil }

// ListRejections returns the uploads the virus scanner refused, newest first (admin).
func (s *Service) ListRejections(ctx context.Context, p *coffer.Principal, limit int) ([]*coffer.Rejection, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	if s.scanning == nil || s.scanning.Rejections == nil {
		return nil, coffer.Errorf(coffer.ENOTIMPLEMENTED, "virus rejections are not recorded on this server")
	}
	if limit < 0 || limit > 1000 {
		return nil, coffer.InvalidField("limit", "limit must be between 1 and 1000")
	}
	return s.scanning.Rejections.ListRejections(ctx, limit)
}

// origin is who uploads what, for the record of a refused upload.
type origin struct {
	p            *coffer.Principal
	name, fileID string
}

// origin describes the content about to be added: the name and id known so far.
func (u *Upload) origin(partName string) origin {
	o := origin{p: u.p, name: partName}
	if u.old != nil {
		o.name, o.fileID = u.old.Name, u.old.ID
	}
	if u.nContent < len(u.items) { // metadata[] came before the file
		it := u.items[u.nContent]
		if it.name != "" {
			o.name = it.name
		}
		if it.id != "" && o.fileID == "" {
			o.fileID = it.id
		}
	}
	return o
}

// scanTee feeds what is read through it to a scan stream, with backpressure and
// without buffering. A scanner that fails stops the upload, unless the scanner is
// allowed to fail open and has not answered (an early verdict always stops it).
type scanTee struct {
	r        io.Reader
	w        virusscan.Stream
	failOpen bool
	err      error // the first write failure; nothing is written after it
	start    time.Time
}

// beginScan opens a scan stream, or returns nil when uploads are not scanned (or the
// scanner is down and may fail open).
func (s *Service) beginScan(ctx context.Context) (*scanTee, error) {
	sc := s.scanning
	if sc == nil || sc.Scanner == nil {
		return nil, nil
	}
	st, err := sc.Scanner.Begin(ctx)
	if err != nil {
		if sc.FailOpen {
			s.log.Warn("virus scanner unavailable; storing the upload unscanned (fail open)", "err", err)
			return nil, nil
		}
		s.log.Error("virus scanner unavailable; upload refused", "err", err)
		return nil, errScannerUnavailable()
	}
	return &scanTee{w: st, failOpen: sc.FailOpen, start: time.Now()}, nil
}

func errScannerUnavailable() error {
	return coffer.Errorf(coffer.EUNAVAILABLE, "virus scanner unavailable")
}

// wrap returns r teed into the scan (r itself without a scan).
func (t *scanTee) wrap(r io.Reader) io.Reader {
	if t == nil {
		return r
	}
	t.r = r
	return t
}

func (t *scanTee) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 && t.err == nil {
		if _, werr := t.w.Write(p[:n]); werr != nil {
			t.err = werr
			if !t.failOpen || errors.Is(werr, virusscan.ErrVerdict) {
				return n, werr
			}
		}
	}
	return n, err
}

// failed reports whether the scan stopped the upload or may have.
func (t *scanTee) failed() bool { return t != nil && t.err != nil }

func (t *scanTee) close() {
	if t != nil {
		t.w.Close()
	}
}

// VirusFound is the cause (errors.As) of the EFORBIDDEN error of an upload or replace
// the virus scanner refused, for a face that reports the file and the signature in
// its own shape.
type VirusFound struct {
	Name      string // the file's name as far as known when it was scanned (Upload.origin)
	Signature string // the scanner's name for what it found
}

func (v *VirusFound) Error() string { return "infected with " + v.Signature }

// scanVerdict waits for the scan's verdict on an upload of size bytes (read so far):
// nil if clean (or unscanned, failing open), EFORBIDDEN "virus found: <signature>"
// (caused by a *VirusFound) after recording the refusal, else EUNAVAILABLE (ETOOLARGE
// past the scanner's limit).
func (s *Service) scanVerdict(ctx context.Context, t *scanTee, b *coffer.Bucket, o origin, size int64) error {
	if t == nil {
		return nil
	}
	v, err := t.w.Finish()
	timing.FromContext(ctx).Add("scan", time.Since(t.start), "")
	if err == nil && !v.Infected && t.err != nil {
		err = t.err // answered early without a finding: not a scan of the whole upload
	}
	switch {
	case err == nil && v.Infected:
		s.recordRejection(ctx, b, o, v.Signature, size)
		e := coffer.Errorf(coffer.EFORBIDDEN, "virus found: %s", v.Signature)
		e.Err = &VirusFound{Name: o.name, Signature: v.Signature}
		return e
	case err == nil:
		return nil
	case t.failOpen:
		s.log.Warn("virus scan failed; the upload is stored unscanned (fail open)", "bucket", b.ID, "name", o.name, "err", err)
		return nil
	case errors.Is(err, virusscan.ErrTooLarge):
		s.log.Warn("upload refused: larger than the virus scanner accepts", "bucket", b.ID, "name", o.name, "size", size, "err", err)
		return coffer.Errorf(coffer.ETOOLARGE, "file is larger than the virus scanner accepts")
	}
	s.log.Error("virus scanner unavailable; upload refused", "bucket", b.ID, "name", o.name, "err", err)
	return errScannerUnavailable()
}

// recordRejection writes the refusal and its event; a failure is logged (the upload
// is refused all the same).
func (s *Service) recordRejection(ctx context.Context, b *coffer.Bucket, o origin, sig string, size int64) {
	r := &coffer.Rejection{ID: coffer.NewFileID(), BucketID: b.ID, Name: o.name, FileID: o.fileID,
		UserID: o.p.UserID, Role: o.p.Role, Signature: sig, Size: size}
	s.log.Warn("upload refused: virus found", "signature", sig, "bucket", b.ID, "name", o.name,
		"file_id", o.fileID, "user_id", o.p.UserID, "role", o.p.Role, "size", size)
	if s.scanning.Rejections == nil {
		return
	}
	if err := s.scanning.Rejections.RecordRejection(context.WithoutCancel(ctx), r); err != nil {
		s.log.Error("recording a virus rejection failed", "err", err, "signature", sig, "bucket", b.ID)
	}
}
