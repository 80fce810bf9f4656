package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"time"

	"github.com/coffer/coffer"
)

// Retrying after write errors: the first retry waits retryMin, each failure doubles
// it up to retryMax. Errors are logged at most once per errLogEvery.
const (
	retryMin    = time.Second
	retryMax    = 30 * time.Second
	errLogEvery = 10 * time.Second
	bufSize     = 64 << 10
)

// writer is the state of the writer goroutine; only that goroutine touches it.
type writer struct {
	l        *Log
	f        *os.File // nil: closed after an error (retried at retryAt) or not yet opened
	bw       *bufio.Writer
	regular  bool      // f is a regular file (tests stand a FIFO or /dev/full in for it)
	size     int64     // of audit.log, including what bw holds
	first    time.Time // earliest record time in audit.log; zero when it is empty
	pending  int64     // records in bw, not yet flushed
	seq      uint64    // the next rotation's sequence number
	segs     []segment // rotated files, oldest first
	retryAt  time.Time
	backoff  time.Duration
	line     []byte
	lastLog  time.Time
	unlogged int // errors not logged since lastLog
}

// newWriter reads what Dir holds (rotated files, their sizes, the next sequence).
func newWriter(l *Log) (*writer, error) {
	segs, err := listRotated(l.cfg.Dir)
	if err != nil {
		return nil, coffer.Internal(err, "audit log directory")
	}
	w := &writer{l: l, segs: segs, seq: 1, backoff: retryMin, bw: bufio.NewWriterSize(nil, bufSize)}
	if n := len(segs); n > 0 {
		w.seq = segs[n-1].seq + 1
	}
	if info, err := os.Stat(join(l.cfg.Dir, currentName)); err == nil {
		w.size = info.Size()
	}
	w.prune()
	w.publishDisk()
	return w, nil
}

// run writes records until the log is stopped, then writes what is queued and closes.
func (w *writer) run() {
	defer close(w.l.done)
	tick := time.NewTicker(w.l.cfg.FlushEvery)
	defer tick.Stop()
	for {
		select {
		case r := <-w.l.queue:
			w.write(&r)
		case <-tick.C:
			w.flush()
		case ch := <-w.l.flushReq:
			for n := len(w.l.queue); n > 0; n-- {
				r := <-w.l.queue
				w.write(&r)
			}
			w.flush()
			close(ch)
		case <-w.l.stop:
			w.drain()
			return
		}
	}
}

// drain writes what is queued, flushes and closes the file.
func (w *writer) drain() {
	for {
		select {
		case r := <-w.l.queue:
			w.write(&r)
		default:
			w.flush()
			if w.f != nil {
				w.f.Close()
				w.f = nil
			}
			return
		}
	}
}

// write appends r to audit.log, rotating first when it would pass MaxFileBytes; a
// record without a time gets the time it is written.
// While the file is failing, records are dropped until the next retry.
func (w *writer) write(r *Record) {
	if w.f == nil && !w.reopen() {
		w.l.counters.dropped.Add(1)
		return
	}
	if r.Time.IsZero() {
		r.Time = now()
	}
	w.line = appendRecord(w.line[:0], r)
	if w.size > 0 && w.size+int64(len(w.line)) > w.l.cfg.MaxFileBytes {
		if err := w.rotate(); err != nil {
			w.fail(err, "rotate")
			w.l.counters.dropped.Add(1)
			return
		}
	}
	if _, err := w.bw.Write(w.line); err != nil {
		w.pending++
		w.fail(err, "write")
		return
	}
	w.pending++
	w.size += int64(len(w.line))
	if t := r.Time; w.first.IsZero() || t.Before(w.first) {
		w.first = t
	}
}

// reopen opens audit.log unless a retry is not yet due; it reports whether the file
// is open.
func (w *writer) reopen() bool {
	if now().Before(w.retryAt) {
		return false
	}
	if err := w.open(); err != nil {
		w.fail(err, "open")
		return false
	}
	return true
}

// open opens (or creates) audit.log for appending. An existing file's first record
// gives its time; a torn last line (a crash mid-write) is ended with '\n' so the next
// record starts a line of its own.
func (w *writer) open() error {
	if err := os.MkdirAll(w.l.cfg.Dir, 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(join(w.l.cfg.Dir, currentName), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.size, w.first, w.pending = f, info.Size(), time.Time{}, 0
	w.regular = info.Mode().IsRegular()
	w.bw.Reset(f)
	if w.size > 0 && w.regular {
		w.first = firstTime(f, info.ModTime())
		if torn(f, w.size) {
			w.bw.WriteByte('\n')
			w.size++
		}
	}
	return nil
}

// firstTime returns the time of f's first record, or fallback if it has none readable.
func firstTime(f *os.File, fallback time.Time) time.Time {
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, 1<<20), 4096).ReadSlice('\n')
	var r struct {
		Time time.Time `json:"time"`
	}
	if err != nil || json.Unmarshal(line, &r) != nil || r.Time.IsZero() {
		return fallback
	}
	return r.Time
}

// torn reports whether f (of size bytes) does not end with '\n'.
func torn(f *os.File, size int64) bool {
	var b [1]byte
	_, err := f.ReadAt(b[:], size-1)
	return err == nil && b[0] != '\n'
}

// flush writes what is buffered and fsyncs the file; records flushed count as written.
func (w *writer) flush() {
	if w.f == nil || w.pending == 0 && w.bw.Buffered() == 0 {
		return
	}
	if err := w.stillThere(); err != nil {
		w.fail(err, "check")
		return
	}
	if err := w.bw.Flush(); err != nil {
		w.fail(err, "write")
		return
	}
	if err := w.f.Sync(); err != nil && w.regular {
		w.fail(err, "fsync")
		return
	}
	w.l.counters.written.Add(w.pending)
	w.pending = 0
	w.backoff = retryMin
	w.publishDisk()
}

// stillThere returns an error when audit.log is no longer the open file (it or its
// directory was removed): what is written to it now would be lost.
func (w *writer) stillThere() error {
	info, err := os.Stat(join(w.l.cfg.Dir, currentName))
	if err != nil {
		return err
	}
	open, err := w.f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(info, open) {
		return errors.New("audit.log was replaced")
	}
	return nil
}

// fail counts err, drops the records still buffered, closes the file and schedules a
// reopen; the error is logged at most once per errLogEvery.
func (w *writer) fail(err error, op string) {
	c := &w.l.counters
	c.writeErrors.Add(1)
	c.dropped.Add(w.pending)
	w.pending = 0
	if w.f != nil {
		w.f.Close()
		w.f = nil
	}
	w.bw.Reset(nil)
	w.retryAt = now().Add(w.backoff)
	w.backoff = min(2*w.backoff, retryMax)
	t := now()
	if t.Sub(w.lastLog) < errLogEvery {
		w.unlogged++
		return
	}
	w.l.log.Error("audit log: "+op+" failed; records are dropped until a retry succeeds",
		"err", err, "dir", w.l.cfg.Dir, "retry_in", w.retryAt.Sub(t), "errors_not_logged", w.unlogged)
	w.lastLog, w.unlogged = t, 0
}

// publishDisk sets BytesOnDisk and Files.
func (w *writer) publishDisk() {
	total := w.size
	for _, s := range w.segs {
		total += s.size
	}
	files := int64(len(w.segs))
	if w.f != nil || w.size > 0 {
		files++
	}
	w.l.counters.bytesOnDisk.Store(total)
	w.l.counters.files.Store(files)
}
