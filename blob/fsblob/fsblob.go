// Package fsblob stores blobs as files on local disk.
//
// Layout under the root directory: objects/<key> holds the blobs, tmp/ holds puts in
// progress, uploads/ the multipart uploads (blob.Multipart; multipart.go). Put writes a temp file, fsyncs it, renames it into place and fsyncs the
// directory, so a blob is either absent or complete and durable, even across a crash
// or power loss. Temp files a crash leaves behind are removed by SweepTemp. All access
// to objects/ goes through an os.Root, so no key can reach outside it.
package fsblob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// Driver is a local-disk blob.Driver.
type Driver struct {
	dir     string
	tmpDir  string
	uploads string // multipart uploads (multipart.go)
	objects *os.Root
}

var (
	_ blob.Driver  = (*Driver)(nil)
	_ blob.Sweeper = (*Driver)(nil)
)

// New opens (creating if needed) a blob directory.
func New(dir string) (*Driver, error) {
	objDir, tmpDir, uploads := filepath.Join(dir, "objects"), filepath.Join(dir, "tmp"), filepath.Join(dir, "uploads")
	for _, d := range []string{objDir, tmpDir, uploads} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("fsblob: %w", err)
		}
	}
	root, err := os.OpenRoot(objDir)
	if err != nil {
		return nil, fmt.Errorf("fsblob: %w", err)
	}
	return &Driver{dir: objDir, tmpDir: tmpDir, uploads: uploads, objects: root}, nil
}

// Put implements blob.Driver.
func (d *Driver) Put(ctx context.Context, key string, r io.Reader, size int64) (blob.Attrs, error) {
	tmp, err := d.writeTemp(ctx, r, size, nil)
	if err != nil {
		return blob.Attrs{}, err
	}
	if err := d.install(tmp, key); err != nil {
		os.Remove(tmp)
		return blob.Attrs{}, err
	}
	return d.Stat(ctx, key)
}

// writeTemp copies r to a new temp file (in 1 MiB writes, past 4 MiB with O_DIRECT:
// direct.go), and to also if not nil, and
// fsyncs it once. It fails, and leaves no file behind, unless r yields exactly size
// bytes (size >= 0) and ctx is still live at the end.
func (d *Driver) writeTemp(ctx context.Context, r io.Reader, size int64, also io.Writer) (string, error) {
	tmp, err := os.CreateTemp(d.tmpDir, "put-*")
	if err != nil {
		return "", err
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	dw := &directWriter{f: tmp}
	var w io.Writer = dw
	if also != nil {
		w = io.MultiWriter(dw, also)
	}
	n, err := copyFull(w, blob.ContextReader(ctx, r))
	if err != nil {
		return "", err
	}
	if size >= 0 && n != size {
		return "", coffer.Errorf(coffer.EINVALID, "blob size %d does not match the declared %d", n, size)
	}
	if err := tmp.Sync(); err != nil {
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	done = true
	return tmp.Name(), nil
}

// install renames the finished temp file to key and fsyncs the parent directory.
// Puts and Deletes race on parent directories: a Delete removes parents it leaves
// empty, possibly while a Put is between making them and renaming into them, and a
// concurrent MkdirAll may find a directory appearing under it. Those failures
// (ErrNotExist, ErrExist) are retried. The first attempt skips making the parents:
// they usually exist, and MkdirAll costs a system call per path element.
func (d *Driver) install(tmpPath, key string) error {
	parent := path.Dir(key)
	target := filepath.Join(d.dir, filepath.FromSlash(key)) // key validated by blob.Store
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		if parent != "." && attempt > 0 { // the parent usually exists: rename first
			err = d.objects.MkdirAll(parent, 0o750)
		}
		if err == nil || errors.Is(err, fs.ErrExist) {
			if err = os.Rename(tmpPath, target); err == nil {
				break
			}
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if _, serr := os.Stat(tmpPath); serr != nil {
			return err // the temp file itself is gone
		}
	}
	if err != nil {
		return err
	}
	dir, err := d.objects.Open(parent)
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// Open implements blob.Driver.
func (d *Driver) Open(ctx context.Context, key string) (blob.Reader, error) {
	f, err := d.objects.Open(key)
	if err != nil {
		return nil, mapErr(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	}
	return &Reader{File: f, attrs: attrsOf(key, fi)}, nil
}

// Stat implements blob.Driver.
func (d *Driver) Stat(ctx context.Context, key string) (blob.Attrs, error) {
	fi, err := d.objects.Stat(key)
	if err != nil {
		return blob.Attrs{}, mapErr(err)
	}
	if !fi.Mode().IsRegular() {
		return blob.Attrs{}, coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	}
	return attrsOf(key, fi), nil
}

// Delete implements blob.Driver: removes the file, then any parent directories it
// leaves empty.
func (d *Driver) Delete(ctx context.Context, key string) error {
	if err := d.objects.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if d.objects.Remove(dir) != nil {
			break
		}
	}
	return nil
}

// List implements blob.Driver. It walks only the directory the prefix names up to its
// last "/" (all of objects/ for a prefix without one), so listing one file's variants
// does not stat every blob in the store.
func (d *Driver) List(ctx context.Context, prefix string, fn func(blob.Attrs) error) error {
	return fs.WalkDir(d.objects.FS(), listRoot(prefix), func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || !e.Type().IsRegular() || len(p) < len(prefix) || p[:len(prefix)] != prefix {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		return fn(attrsOf(p, fi))
	})
}

// listRoot is the directory under objects/ holding every key that starts with prefix:
// the prefix up to its last "/", or "." when there is none or it is not a plain
// relative path.
func listRoot(prefix string) string {
	i := strings.LastIndexByte(prefix, '/')
	if i <= 0 || !fs.ValidPath(prefix[:i]) {
		return "."
	}
	return prefix[:i]
}

// SweepTemp implements blob.Sweeper: temp files, and the remains of multipart uploads
// that a crash interrupted while they were being created or removed.
func (d *Driver) SweepTemp(ctx context.Context, olderThan time.Time) (int, error) {
	entries, err := os.ReadDir(d.tmpDir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(olderThan) {
			continue
		}
		if os.Remove(filepath.Join(d.tmpDir, e.Name())) == nil {
			n++
		}
	}
	m, err := d.sweepUploads(olderThan)
	return n + m, err
}

// Close implements blob.Driver.
func (d *Driver) Close() error { return d.objects.Close() }

// Reader is an open disk blob; OSFile exposes the file so HTTP can use sendfile.
type Reader struct {
	*os.File
	attrs blob.Attrs
}

// Attrs implements blob.Reader.
func (r *Reader) Attrs() blob.Attrs { return r.attrs }

// OSFile returns the underlying file.
func (r *Reader) OSFile() *os.File { return r.File }

func attrsOf(key string, fi fs.FileInfo) blob.Attrs {
	return blob.Attrs{Key: key, Size: fi.Size(), ModTime: fi.ModTime().UTC()}
}

func mapErr(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrInvalid) {
		return coffer.Errorf(coffer.ENOTFOUND, "blob not found")
	}
	return err
}
