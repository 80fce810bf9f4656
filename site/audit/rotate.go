package audit

import (
	"os"
	"time"
)

// rotate closes audit.log (flushed and fsynced) under its rotated name, points the
// ship cursor at that name, opens a new audit.log and deletes the oldest rotated files
// while all of them together pass MaxTotalBytes.
func (w *writer) rotate() error {
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.l.counters.written.Add(w.pending)
	w.pending = 0
	w.f.Close()
	w.f = nil
	first := w.first
	if first.IsZero() {
		first = now()
	}
	seg := segment{name: rotatedName(first, w.seq), first: first.UTC(), seq: w.seq, size: w.size}
	if err := w.rename(seg.name); err != nil {
		return err
	}
	w.seq++
	w.segs = append(w.segs, seg)
	w.size, w.first = 0, time.Time{}
	w.prune()
	if err := w.open(); err != nil {
		return err
	}
	w.publishDisk()
	return nil
}

// rename renames audit.log to name; the shipper's cursor, if it is reading
// audit.log, follows the file.
func (w *writer) rename(name string) error {
	if w.l.ship != nil {
		w.l.ship.mu.Lock()
		defer w.l.ship.mu.Unlock()
	}
	if err := os.Rename(join(w.l.cfg.Dir, currentName), join(w.l.cfg.Dir, name)); err != nil {
		return err
	}
	if w.l.ship != nil {
		w.l.ship.renamedLocked(name)
	}
	return nil
}

// prune deletes the oldest rotated files while they and a full audit.log would pass
// MaxTotalBytes, so Dir stays within it (but for one record longer than
// MaxFileBytes). audit.log itself is never deleted; the shipper skips files deleted
// under it.
func (w *writer) prune() {
	total := w.size
	for _, s := range w.segs {
		total += s.size
	}
	for len(w.segs) > 0 && total-w.size+w.l.cfg.MaxFileBytes > w.l.cfg.MaxTotalBytes {
		old := w.segs[0]
		if err := os.Remove(join(w.l.cfg.Dir, old.name)); err != nil && !os.IsNotExist(err) {
			w.l.counters.writeErrors.Add(1)
			w.l.log.Warn("audit log: deleting an old file failed", "file", old.name, "err", err)
			return
		}
		w.segs = w.segs[1:]
		total -= old.size
	}
}
