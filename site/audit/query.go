package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/coffer/coffer"
)

// Query limits.
const (
	DefaultLimit = 1000
	MaxLimit     = 100_000
	// orderSlack is how far out of order (by Time) records may be written: a record
	// carries its request's time and is written when the request ends. A query's Since
	// skips a rotated file only when the next file began more than this before Since;
	// a request that took longer to serve may be missed by a Since-bounded query.
	orderSlack = time.Hour
)

// Filter selects records; zero fields select everything.
type Filter struct {
	Tenant, Site, Host string    // exact (Host without regard to case)
	Since, Until       time.Time // Since <= Time < Until
	Path               string    // a Glob
	Status             int       // exact
	Cache              string    // exact, without regard to case (HIT, MISS, ...)
	Limit              int       // the newest Limit matches are returned; 0: DefaultLimit
}

// query is a checked Filter.
type query struct {
	Filter
	glob Glob
}

// compile checks f: EINVALID for a bad path pattern, a negative or too large limit
// or status, or Until before Since.
func compile(f Filter) (query, error) {
	q := query{Filter: f}
	var err error
	if q.glob, err = ParseGlob(f.Path); err != nil {
		return q, err
	}
	switch {
	case f.Limit < 0 || f.Limit > MaxLimit:
		return q, coffer.InvalidField("limit", "limit must be between 1 and 100000")
	case f.Status < 0 || f.Status > 999:
		return q, coffer.InvalidField("status", "status must be between 100 and 999")
	case !f.Since.IsZero() && !f.Until.IsZero() && f.Until.Before(f.Since):
		return q, coffer.InvalidField("until", "until is before since")
	}
	if q.Limit == 0 {
		q.Limit = DefaultLimit
	}
	return q, nil
}

// match reports whether r passes q.
func (q *query) match(r *Record) bool {
	switch {
	case q.Tenant != "" && r.Tenant != q.Tenant, q.Site != "" && r.Site != q.Site,
		q.Host != "" && !strings.EqualFold(r.Host, q.Host),
		q.Status != 0 && r.Status != q.Status, q.Cache != "" && !strings.EqualFold(r.Cache, q.Cache),
		!q.Since.IsZero() && r.Time.Before(q.Since), !q.Until.IsZero() && !r.Time.Before(q.Until):
		return false
	}
	return q.glob.Match(r.Path)
}

// Query returns the newest f.Limit records in dir (an audit log's Config.Dir) that
// match f, oldest first: it reads the rotated files and audit.log from the newest
// back, skipping files that the time range excludes by their names. Lines that are
// not a record (torn by a crash) are skipped. A missing dir holds no records. It
// returns EINVALID for a bad filter. It may run beside the writer, in this process or
// another: a file rotated while it reads is read once.
func Query(ctx context.Context, dir string, f Filter) ([]Record, error) {
	q, err := compile(f)
	if err != nil {
		return nil, err
	}
	cur, err := os.Open(join(dir, currentName))
	if err != nil && !os.IsNotExist(err) {
		return nil, coffer.Internal(err, "audit log")
	}
	if cur != nil {
		defer cur.Close()
	}
	segs, err := listRotated(dir)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, coffer.Internal(err, "audit log")
	}
	return q.scan(ctx, dir, segs, cur)
}

// scan reads cur (audit.log, may be nil) and then segs from the newest back until
// q.Limit records matched.
func (q *query) scan(ctx context.Context, dir string, segs []segment, cur *os.File) ([]Record, error) {
	rd := bufio.NewReaderSize(nil, maxLine)
	var out [][]Record
	left := q.Limit
	if cur != nil {
		got, err := q.scanFile(ctx, rd, cur, left)
		if err != nil {
			return nil, err
		}
		out, left = append(out, got), left-len(got)
	}
	for i := len(segs) - 1; i >= 0 && left > 0; i-- {
		if q.skip(segs, i) {
			continue
		}
		got, err := q.scanSegment(ctx, rd, join(dir, segs[i].name), cur, left)
		if err != nil {
			return nil, err
		}
		out, left = append(out, got), left-len(got)
	}
	slices.Reverse(out)
	recs := slices.Concat(out...)
	slices.SortStableFunc(recs, func(a, b Record) int { return a.Time.Compare(b.Time) })
	return recs, nil
}

// skip reports whether the time range excludes segs[i] by its name and its
// successor's.
func (q *query) skip(segs []segment, i int) bool {
	if !q.Until.IsZero() && !segs[i].first.Before(q.Until) {
		return true
	}
	return !q.Since.IsZero() && i+1 < len(segs) && segs[i+1].first.Add(orderSlack).Before(q.Since)
}

// scanSegment reads the rotated file path, unless it is cur renamed since cur was
// opened (then it was read already) or it was deleted meanwhile.
func (q *query) scanSegment(ctx context.Context, rd *bufio.Reader, path string, cur *os.File, keep int) ([]Record, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, coffer.Internal(err, "audit log")
	}
	defer f.Close()
	if cur != nil {
		a, errA := f.Stat()
		b, errB := cur.Stat()
		if errA == nil && errB == nil && os.SameFile(a, b) {
			return nil, nil
		}
	}
	return q.scanFile(ctx, rd, f, keep)
}

// scanFile returns the last keep records of f that match q, in file order.
func (q *query) scanFile(ctx context.Context, rd *bufio.Reader, f *os.File, keep int) ([]Record, error) {
	rd.Reset(f)
	var got []Record
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		line, _, err := nextLine(rd)
		if err == io.EOF {
			break
		} else if err != nil {
			return nil, coffer.Internal(err, "audit log read")
		}
		var r Record
		if line == nil || json.Unmarshal(line, &r) != nil || !q.match(&r) {
			continue
		}
		if got = append(got, r); len(got) >= 2*keep {
			got = append(got[:0], got[len(got)-keep:]...)
		}
	}
	if len(got) > keep {
		got = got[len(got)-keep:]
	}
	return got, nil
}
