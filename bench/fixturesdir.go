package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeFixtures writes the download fixtures of scs into dir (created if missing),
// each through a temporary file and a rename, so a static server such as nginx can
// serve them to a --url run.
func writeFixtures(dir string, scs []Scenario, log io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fixtures dir: %w", err)
	}
	done := map[string]bool{}
	for _, sc := range scs {
		f := sc.Fixture
		if sc.Kind != KindDownload || done[f.Name] {
			continue
		}
		done[f.Name] = true
		if err := writeFixture(filepath.Join(dir, f.Name), f); err != nil {
			return err
		}
		fmt.Fprintf(log, "wrote fixture %s\n", filepath.Join(dir, f.Name))
	}
	return nil
}

func writeFixture(path string, f Fixture) error {
	src := f.Open()
	defer src.Close()
	return writeAtomic(path, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	})
}

// writeAtomic writes path through a temporary file in its directory (created if
// missing), buffered, readable by all (a static server's workers read it), and a
// rename.
func writeAtomic(path string, gen func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fixture-*")
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	bw := bufio.NewWriterSize(tmp, 64<<10)
	err = gen(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("fixture %s: %w", path, err)
	}
	return nil
}
