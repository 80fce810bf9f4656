package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

// shipOnce ships one batch from the cursor. more is true when there may be more to
// ship right away (a full batch, or the cursor moved to the next file).
func (s *shipper) shipOnce() (more bool, err error) {
	f, cur, moved, err := s.open()
	if err != nil || f == nil {
		return moved, err
	}
	defer f.Close()
	records, n, full, eof, err := s.readBatch(f, cur.Offset)
	if err != nil {
		return false, err
	}
	if n == 0 {
		if eof && cur.File != currentName {
			s.advance(cur.File)
			return true, nil
		}
		return false, nil
	}
	if records > 0 {
		if err := s.post(); err != nil {
			return false, err
		}
	}
	s.ack(cur.Offset+n, records)
	return full, nil
}

// open opens the cursor's file. A rotated file deleted (by the total bound) before it
// was shipped is skipped: moved is true and f nil. f is nil too when there is nothing
// to read yet.
func (s *shipper) open() (f *os.File, cur cursor, moved bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur.File == "" {
		s.cur = cursor{File: s.next("")}
	}
	cur = s.cur
	f, err = os.Open(join(s.l.cfg.Dir, cur.File))
	switch {
	case os.IsNotExist(err) && cur.File == currentName:
		return nil, cur, false, nil
	case os.IsNotExist(err):
		s.l.log.Warn("audit log: a file was deleted before it was shipped", "file", cur.File)
		s.cur = cursor{File: s.next(cur.File)}
		s.saveLocked()
		return nil, cur, true, nil
	case err != nil:
		return nil, cur, false, err
	}
	if info, err := f.Stat(); err == nil && cur.File == currentName && info.Size() < cur.Offset {
		s.cur.Offset, cur.Offset = 0, 0 // audit.log was replaced (its directory was recreated)
	}
	return f, cur, false, nil
}

// next returns the file after name in rotation order: the oldest rotated file after
// it, else audit.log. "" (or an unknown name) is before every file.
func (s *shipper) next(name string) string {
	segs, _ := listRotated(s.l.cfg.Dir)
	after, ok := parseRotated(name)
	for _, seg := range segs {
		if !ok || seg.seq > after.seq {
			return seg.name
		}
	}
	return currentName
}

// advance moves the cursor from the finished rotated file name to the next one.
func (s *shipper) advance(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur.File == name {
		s.cur = cursor{File: s.next(name)}
		s.saveLocked()
	}
}

// ack moves the cursor to offset in its file (which the writer may have renamed
// since: the offset is the same file's) and saves it.
func (s *shipper) ack(offset int64, records int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cur.Offset = offset
	s.saveLocked()
	s.l.counters.shipped.Add(int64(records))
}

// readBatch reads complete lines from offset into s.body: at most Batch records and
// MaxBatchBytes (but at least one record). n is the bytes the batch covers, including
// lines skipped as unreadable (torn by a crash, too long); full says a limit was met,
// eof that the file ended.
func (s *shipper) readBatch(f *os.File, offset int64) (records int, n int64, full, eof bool, err error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, 0, false, false, err
	}
	s.rd.Reset(f)
	s.body.Reset()
	for records < s.cfg.Batch {
		line, ln, err := nextLine(s.rd)
		if err == io.EOF {
			return records, n, false, true, nil
		} else if err != nil {
			return 0, 0, false, false, err
		}
		if line != nil && records > 0 && int64(s.body.Len()+len(line)) > s.cfg.MaxBatchBytes {
			return records, n, true, false, nil
		}
		n += ln
		if line == nil || !json.Valid(line) {
			continue
		}
		s.body.Write(line)
		records++
	}
	return records, n, true, false, nil
}

// post sends s.body to the collector; only a 2xx answer is a success.
func (s *shipper) post() error {
	ctx, cancel := context.WithTimeout(s.ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.URL, bytes.NewReader(s.body.Bytes()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-ndjson")
	for k, v := range s.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.CopyN(io.Discard, resp.Body, 64<<10)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("collector answered %s", resp.Status)
	}
	return nil
}
