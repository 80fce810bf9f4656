package fsblob

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
)

// Multipart uploads live in uploads/<id>/: the file "key" names the blob the upload
// will become (its presence is what makes the upload exist), and each part is a file
// "part-<number>-<etag>" (the ETag is the part's MD5), written like a blob (temp file,
// fsync, rename, fsync). Replacing a part renames the new file in before removing the
// old one; should a crash leave both, the newer counts.

var _ blob.Multipart = (*Driver)(nil)

// CreateUpload implements blob.Multipart.
func (d *Driver) CreateUpload(ctx context.Context, key string) (string, error) {
	var r [16]byte
	rand.Read(r[:])
	id := hex.EncodeToString(r[:])
	tmp, err := d.writeTemp(ctx, strings.NewReader(key), int64(len(key)), nil)
	if err != nil {
		return "", err
	}
	dir := d.uploadDir(id)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "key")); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return id, errors.Join(syncDir(dir), syncDir(filepath.Dir(dir)))
}

// PutPart implements blob.Multipart.
func (d *Driver) PutPart(ctx context.Context, key, id string, n int, r io.Reader, size int64) (blob.Part, error) {
	if n < 1 || n > blob.MaxParts {
		return blob.Part{}, coffer.Errorf(coffer.EINVALID, "part number %d out of 1..%d", n, blob.MaxParts)
	}
	dir, err := d.upload(key, id)
	if err != nil {
		return blob.Part{}, err
	}
	h := md5.New()
	tmp, err := d.writeTemp(ctx, r, size, h)
	if err != nil {
		return blob.Part{}, err
	}
	etag := hex.EncodeToString(h.Sum(nil))
	name := fmt.Sprintf("part-%05d-%s", n, etag)
	old, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("part-%05d-*", n)))
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return blob.Part{}, mapErr(err)
	}
	if err := syncDir(dir); err != nil {
		return blob.Part{}, err
	}
	for _, o := range old {
		if filepath.Base(o) != name {
			os.Remove(o)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return blob.Part{}, err
	}
	return blob.Part{Number: n, Size: fi.Size(), ETag: etag}, nil
}

// Parts implements blob.Multipart.
func (d *Driver) Parts(ctx context.Context, key, id string) ([]blob.Part, error) {
	dir, err := d.upload(key, id)
	if err != nil {
		return nil, err
	}
	ps, _, err := partsIn(dir)
	return ps, err
}

// Complete implements blob.Multipart.
func (d *Driver) Complete(ctx context.Context, key, id string, parts []blob.Part) (blob.Attrs, error) {
	dir, err := d.upload(key, id)
	if err != nil {
		return blob.Attrs{}, err
	}
	files, err := chosenParts(dir, parts)
	if err != nil {
		return blob.Attrs{}, err
	}
	pr := &partsReader{files: files}
	tmp, err := d.writeTemp(ctx, pr, -1, nil)
	pr.Close()
	if err != nil {
		return blob.Attrs{}, err
	}
	if err := d.install(tmp, key); err != nil {
		os.Remove(tmp)
		return blob.Attrs{}, err
	}
	if err := removeUpload(dir); err != nil {
		return blob.Attrs{}, err
	}
	return d.Stat(ctx, key)
}

// Abort implements blob.Multipart.
func (d *Driver) Abort(ctx context.Context, key, id string) error {
	dir, err := d.upload(key, id)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return nil
	} else if err != nil {
		return err
	}
	return removeUpload(dir)
}

// Uploads implements blob.Multipart.
func (d *Driver) Uploads(ctx context.Context, fn func(blob.Upload) error) error {
	entries, err := os.ReadDir(d.uploads)
	if err != nil {
		return err
	}
	for _, e := range entries {
		dir := d.uploadDir(e.Name())
		key, err := os.ReadFile(filepath.Join(dir, "key"))
		fi, serr := os.Stat(filepath.Join(dir, "key"))
		if err != nil || serr != nil {
			continue // being created or removed
		}
		if err := fn(blob.Upload{Key: string(key), ID: e.Name(), Created: fi.ModTime().UTC()}); err != nil {
			return err
		}
	}
	return nil
}

// uploadDir is the directory of upload id.
func (d *Driver) uploadDir(id string) string { return filepath.Join(d.uploads, id) }

// upload returns the directory of upload id of key; ENOTFOUND if there is none. Ids
// are 32 hex digits, so no id reaches outside uploads/.
func (d *Driver) upload(key, id string) (string, error) {
	notFound := coffer.Errorf(coffer.ENOTFOUND, "upload not found")
	if _, err := hex.DecodeString(id); err != nil || len(id) != 32 {
		return "", notFound
	}
	dir := d.uploadDir(id)
	k, err := os.ReadFile(filepath.Join(dir, "key"))
	if errors.Is(err, fs.ErrNotExist) || (err == nil && string(k) != key) {
		return "", notFound
	}
	return dir, err
}

// sweepUploads removes upload directories without a key file (a crash interrupted
// CreateUpload or removeUpload) last changed before olderThan, and returns how many.
// Uploads in progress are left alone: expiring those is the faces' policy (tus
// expiration, S3 lifecycle rules), through Uploads and Abort.
func (d *Driver) sweepUploads(olderThan time.Time) (int, error) {
	entries, err := os.ReadDir(d.uploads)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		dir := d.uploadDir(e.Name())
		fi, err := e.Info()
		if err != nil || !fi.ModTime().Before(olderThan) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, "key")); errors.Is(err, fs.ErrNotExist) && os.RemoveAll(dir) == nil {
			n++
		}
	}
	return n, nil
}

// partsIn lists the parts in dir by number, and the file holding each.
func partsIn(dir string) ([]blob.Part, map[int]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	byNum := map[int]blob.Part{}
	files := map[int]string{}
	newest := map[int]int64{}
	for _, e := range entries {
		num, etag, ok := strings.Cut(strings.TrimPrefix(e.Name(), "part-"), "-")
		n, err := strconv.Atoi(num)
		fi, ierr := e.Info()
		if !ok || err != nil || ierr != nil || !strings.HasPrefix(e.Name(), "part-") {
			continue
		}
		if _, seen := byNum[n]; seen && fi.ModTime().UnixNano() < newest[n] {
			continue // a crash left the part it replaced
		}
		byNum[n], files[n], newest[n] = blob.Part{Number: n, Size: fi.Size(), ETag: etag}, filepath.Join(dir, e.Name()), fi.ModTime().UnixNano()
	}
	ps := make([]blob.Part, 0, len(byNum))
	for _, p := range byNum {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Number < ps[j].Number })
	return ps, files, nil
}

// chosenParts returns the files of parts, which must be stored, with their ETags, and
// in ascending order; EINVALID otherwise.
func chosenParts(dir string, parts []blob.Part) ([]string, error) {
	stored, files, err := partsIn(dir)
	if err != nil {
		return nil, err
	}
	etags := map[int]string{}
	for _, p := range stored {
		etags[p.Number] = p.ETag
	}
	chosen := make([]string, 0, len(parts))
	for i, p := range parts {
		if etags[p.Number] == "" || etags[p.Number] != p.ETag || (i > 0 && p.Number <= parts[i-1].Number) {
			return nil, coffer.Errorf(coffer.EINVALID, "part %d is missing, out of order or changed", p.Number)
		}
		chosen = append(chosen, files[p.Number])
	}
	if len(chosen) == 0 {
		return nil, coffer.Errorf(coffer.EINVALID, "no parts to complete the upload with")
	}
	return chosen, nil
}

// removeUpload ends the upload in dir: its key file goes first, so that a crash
// midway leaves no upload, only files that Uploads does not list.
func removeUpload(dir string) error {
	if err := os.Remove(filepath.Join(dir, "key")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return os.RemoveAll(dir)
}

// syncDir fsyncs directory dir, making renames and removals in it durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// partsReader reads files one after the other, holding one open at a time.
type partsReader struct {
	files []string
	cur   *os.File
}

func (r *partsReader) Read(p []byte) (int, error) {
	for {
		if r.cur == nil {
			if len(r.files) == 0 {
				return 0, io.EOF
			}
			f, err := os.Open(r.files[0])
			if err != nil {
				return 0, err
			}
			r.cur, r.files = f, r.files[1:]
		}
		n, err := r.cur.Read(p)
		if err == io.EOF {
			r.cur.Close()
			r.cur = nil
			if n == 0 {
				continue
			}
			err = nil
		}
		return n, err
	}
}

// Close closes the file being read, if any.
func (r *partsReader) Close() error {
	if r.cur == nil {
		return nil
	}
	return r.cur.Close()
}
