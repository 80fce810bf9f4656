package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"sync"
	"time"
)

// shipBackoffMax caps the wait between failed POSTs.
const shipBackoffMax = time.Minute

// cursor is where shipping stands: the next byte of File to ship. File is a rotated
// name, currentName, or "" for "the oldest file there is".
type cursor struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
}

// shipper POSTs the log's files to the collector, from a cursor persisted in
// Dir/ship.cursor after every acknowledged batch: at-least-once delivery of every
// record still on disk, across collector outages and restarts.
type shipper struct {
	l      *Log
	client *http.Client
	cfg    CollectorConfig
	mu     sync.Mutex // guards cur; the writer holds it while renaming audit.log
	cur    cursor
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	rd     *bufio.Reader
	body   bytes.Buffer
}

// newShipper loads the cursor. A cursor left on audit.log by a crash between renaming
// it and saving the cursor moves to the newest rotated file, which is that file.
func newShipper(l *Log, client *http.Client) (*shipper, error) {
	s := &shipper{l: l, client: client, cfg: l.cfg.Collector, done: make(chan struct{}),
		rd: bufio.NewReaderSize(nil, maxLine)}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	b, err := os.ReadFile(join(l.cfg.Dir, cursorName))
	if err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("audit ship cursor: %w", err)
	}
	if err == nil && json.Unmarshal(b, &s.cur) != nil {
		l.log.Warn("audit log: ship cursor unreadable; shipping restarts from the oldest file", "dir", l.cfg.Dir)
		s.cur = cursor{}
	}
	if _, err := os.Stat(join(l.cfg.Dir, currentName)); s.cur.File == currentName && os.IsNotExist(err) {
		if segs, _ := listRotated(l.cfg.Dir); len(segs) > 0 {
			s.cur.File = segs[len(segs)-1].name
		}
	}
	return s, nil
}

// renamedLocked follows audit.log to its rotated name; s.mu is held.
func (s *shipper) renamedLocked(name string) {
	if s.cur.File == currentName {
		s.cur.File = name
		s.saveLocked()
	}
}

// saveLocked writes the cursor (temporary file, fsync, rename); s.mu is held.
func (s *shipper) saveLocked() {
	b, _ := json.Marshal(s.cur)
	path := join(s.l.cfg.Dir, cursorName)
	err := writeFileSync(path+".tmp", b)
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		s.l.log.Warn("audit log: saving the ship cursor failed; records may be shipped again", "err", err)
	}
}

// writeFileSync writes b to path and fsyncs it.
func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// run ships until closed: a full batch is followed by the next at once; otherwise it
// waits FlushEvery, or the backoff after a failure (doubling up to shipBackoffMax).
func (s *shipper) run() {
	defer close(s.done)
	backoff := s.cfg.FlushEvery
	for {
		more, err := s.shipOnce()
		wait := s.cfg.FlushEvery
		switch {
		case err != nil:
			s.l.counters.shipFailures.Add(1)
			s.l.log.Warn("audit log: shipping to the collector failed; retrying", "err", err, "retry_in", backoff)
			wait, backoff = backoff, min(2*backoff, shipBackoffMax)
		case more:
			backoff = s.cfg.FlushEvery
			continue
		default:
			backoff = s.cfg.FlushEvery
		}
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// close stops the shipper and waits for it until ctx ends.
func (s *shipper) close(ctx context.Context) error {
	s.cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
