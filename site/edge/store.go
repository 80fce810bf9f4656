package edge

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/coffer/coffer/site"
)

// fillChunk is how much room a fill of unknown size reserves at a time.
const fillChunk = 1 << 20

// Fill errors: the entry is discarded and the fill's readers fail.
var (
	errShort  = errors.New("edge: the origin sent fewer bytes than its Content-Length")
	errLonger = errors.New("edge: the origin sent more bytes than its Content-Length")
	errTooBig = errors.New("edge: the object grew past the maximum object size without a Content-Length")
	errNoRoom = errors.New("edge: no room on disk for the object (fills in progress hold it)")
)

// reserve makes room for n more body bytes, evicting entries (SIEVE order); it
// fails when fills in progress hold the space.
func (c *Cache) reserve(n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.used+n > c.cfg.MaxBytes {
		v := c.order.victim()
		if v == nil {
			return false
		}
		c.drop(v)
		c.stats.evictions.Add(1)
	}
	c.used += n
	return true
}

func (c *Cache) release(n int64) {
	c.mu.Lock()
	c.used -= n
	c.mu.Unlock()
}

// drop removes e from the index and unlinks its files (readers that opened it
// keep reading). Callers hold c.mu for writing.
func (c *Cache) drop(e *entry) {
	if c.entries[e.Key] == e {
		delete(c.entries, e.Key)
	}
	if x := c.scopes[e.Scope]; x != nil {
		x.remove(e)
		if len(x.all) == 0 {
			delete(c.scopes, e.Scope)
		}
	}
	c.order.remove(e)
	c.used -= e.Size
	c.closeFile(e)
	os.Remove(e.file + ".meta")
	os.Remove(e.file)
}

// insert adds e (whose bytes are already counted in c.used). Callers hold c.mu
// for writing.
func (c *Cache) insert(e *entry) {
	if old := c.entries[e.Key]; old != nil {
		c.drop(old)
	}
	c.entries[e.Key] = e
	x := c.scopes[e.Scope]
	if x == nil {
		x = newScopeIndex()
		c.scopes[e.Scope] = x
	}
	x.add(e)
	c.order.insert(e)
}

// fillWriter writes a fill's temp file, checking the size and reserving room as
// it grows.
type fillWriter struct {
	c        *Cache
	fl       *flight
	f        *os.File
	tmp      string
	n        int64
	reserved int64
}

// Write implements io.Writer.
func (w *fillWriter) Write(p []byte) (int, error) {
	size, next := w.fl.info.Size, w.n+int64(len(p))
	switch {
	case size >= 0 && next > size:
		return 0, errLonger
	case next > w.c.cfg.MaxObjectSize:
		return 0, errTooBig
	}
	for next > w.reserved {
		grow := min(fillChunk, w.c.cfg.MaxObjectSize-w.reserved)
		if !w.c.reserve(grow) {
			return 0, errNoRoom
		}
		w.reserved += grow
	}
	k, err := w.f.Write(p)
	w.n += int64(k)
	w.fl.fill.advance(k)
	return k, err
}

// fillFrom writes f's body to disk while the flight's readers follow it, then
// commits the entry or discards it.
func (c *Cache) fillFrom(fl *flight, f *site.Fetched, reserved int64) {
	defer f.Body.Close()
	w, err := c.startFill(fl, reserved)
	if err != nil {
		c.settle(fl, outFailed, err)
		return
	}
	c.settle(fl, outBody, nil)
	buf := make([]byte, 64<<10)
	_, err = io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{f.Body}, buf)
	if err == nil && fl.info.Size >= 0 && w.n != fl.info.Size {
		err = errShort
	}
	if err != nil && !errors.Is(err, errTooBig) && !errors.Is(err, errNoRoom) {
		c.originFailed(fl.origin)
	}
	c.finishFill(fl, w, err)
}

// startFill creates the temp file; on failure the reservation is returned.
func (c *Cache) startFill(fl *flight, reserved int64) (*fillWriter, error) {
	f, err := os.CreateTemp(c.tmpDir, "fill-*")
	if err != nil {
		c.release(reserved)
		return nil, err
	}
	fl.fill = newFill(f.Name(), fl.info.Size)
	return &fillWriter{c: c, fl: fl, f: f, tmp: f.Name(), reserved: reserved}, nil
}

// finishFill commits a complete fill or discards a failed one.
func (c *Cache) finishFill(fl *flight, w *fillWriter, err error) {
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = c.commit(fl, w)
	}
	if err != nil {
		fl.fill.finish(err) // before the unlink: a reader opening now sees the error
		os.Remove(w.tmp)
		c.stats.fillErrors.Add(1)
		c.log.Info("edge: fill discarded", "path", fl.path, "err", err)
		c.mu.Lock()
		c.used -= w.reserved
		c.endFlight(fl)
		c.mu.Unlock()
		return
	}
	fl.fill.finish(nil)
}

// commit moves a complete fill into the data directory and the index.
func (c *Cache) commit(fl *flight, w *fillWriter) error {
	m := fl.info
	m.Size = w.n
	name := fileName(fl.key)
	final := filepath.Join(c.dataDir, name)
	if err := writeMeta(filepath.Join(c.tmpDir, name+".meta"), &m); err != nil {
		return err
	}
	fl.fill.mu.Lock()
	err := os.Rename(w.tmp, final)
	if err == nil {
		fl.fill.path = final
	}
	fl.fill.mu.Unlock()
	if err == nil {
		err = os.Rename(filepath.Join(c.tmpDir, name+".meta"), final+".meta")
	}
	if err != nil {
		os.Remove(final)
		os.Remove(filepath.Join(c.tmpDir, name+".meta"))
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used -= w.reserved - w.n
	w.reserved = w.n
	c.endFlight(fl)
	if fl.purged || c.closed {
		c.used -= w.n
		os.Remove(final + ".meta")
		os.Remove(final)
		return nil
	}
	c.insert(&entry{meta: m, file: final, name: name})
	return nil
}

// endFlight removes fl from the flights in progress. Callers hold c.mu.
func (c *Cache) endFlight(fl *flight) {
	if c.inflight[fl.key] == fl {
		delete(c.inflight, fl.key)
	}
}

// writeMeta writes a sidecar file.
func writeMeta(path string, m *meta) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}
