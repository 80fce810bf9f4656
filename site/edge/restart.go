package edge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// load rebuilds the index from the data directory a previous run left: every
// body with a readable sidecar whose size matches is kept (oldest first into
// the eviction order, so the newest are the last evicted); partial fills (the
// temp directory), bodies without a sidecar, sidecars without a body and sizes
// that do not match are deleted. Entries past MaxBytes (a smaller bound than
// the last run's) are evicted at once.
func (c *Cache) load() error {
	if err := os.RemoveAll(c.tmpDir); err != nil {
		return err
	}
	for _, d := range []string{c.dataDir, c.tmpDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	names, err := os.ReadDir(c.dataDir)
	if err != nil {
		return err
	}
	var found []*entry
	for _, de := range names {
		name := de.Name()
		if strings.HasSuffix(name, ".meta") {
			if _, err := os.Stat(filepath.Join(c.dataDir, strings.TrimSuffix(name, ".meta"))); err != nil {
				os.Remove(filepath.Join(c.dataDir, name))
			}
			continue
		}
		if e := c.loadEntry(name); e != nil {
			found = append(found, e)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Stored.Before(found[j].Stored) })
	for _, e := range found {
		c.used += e.Size
		c.insert(e)
	}
	for c.used > c.cfg.MaxBytes {
		c.drop(c.order.victim())
	}
	return nil
}

// loadEntry reads the sidecar of body file name, deleting both when they do
// not describe each other.
func (c *Cache) loadEntry(name string) *entry {
	file := filepath.Join(c.dataDir, name)
	var m meta
	b, err := os.ReadFile(file + ".meta")
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	st, serr := os.Stat(file)
	if err != nil || serr != nil || !st.Mode().IsRegular() || st.Size() != m.Size || m.Key == "" {
		c.log.Info("edge: dropped an unreadable cached body at start", "file", name)
		os.Remove(file)
		os.Remove(file + ".meta")
		return nil
	}
	return &entry{meta: m, file: file, name: name}
}
