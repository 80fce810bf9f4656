package audit

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Names of the files in Config.Dir.
const (
	currentName = "audit.log"
	cursorName  = "ship.cursor"
	nameTime    = "20060102T150405.000000000Z" // sortable UTC, fixed width
)

// segment is a rotated file: audit-<first record time>-<seq>.log.
type segment struct {
	name  string
	first time.Time // UTC time of its earliest record
	seq   uint64    // rotation order: higher is newer
	size  int64
}

// rotatedName returns the name a file whose earliest record is at first gets as the
// seq-th rotation.
func rotatedName(first time.Time, seq uint64) string {
	return fmt.Sprintf("audit-%s-%06d.log", first.UTC().Format(nameTime), seq)
}

// parseRotated reads a rotated file's name; ok is false for any other name.
func parseRotated(name string) (segment, bool) {
	rest, ok := strings.CutPrefix(name, "audit-")
	if !ok {
		return segment{}, false
	}
	rest, ok = strings.CutSuffix(rest, ".log")
	if !ok || len(rest) < len(nameTime)+2 || rest[len(nameTime)] != '-' {
		return segment{}, false
	}
	t, err := time.Parse(nameTime, rest[:len(nameTime)])
	if err != nil {
		return segment{}, false
	}
	seq, err := strconv.ParseUint(rest[len(nameTime)+1:], 10, 64)
	if err != nil {
		return segment{}, false
	}
	return segment{name: name, first: t, seq: seq}, true
}

// listRotated returns dir's rotated files, oldest (lowest seq) first, with their sizes.
// A file deleted while listing is left out.
func listRotated(dir string) ([]segment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segment
	for _, e := range entries {
		s, ok := parseRotated(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if info, err := e.Info(); err == nil {
			s.size = info.Size()
			segs = append(segs, s)
		}
	}
	slices.SortFunc(segs, func(a, b segment) int {
		if a.seq != b.seq {
			return cmp.Compare(a.seq, b.seq)
		}
		return strings.Compare(a.name, b.name)
	})
	return segs, nil
}

// join returns name's path in dir.
func join(dir, name string) string { return filepath.Join(dir, name) }
