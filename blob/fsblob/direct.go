package fsblob

import (
	"errors"
	"os"
	"unsafe"
)

// Large puts bypass the page cache. Through the page cache every byte is copied into
// a freshly allocated page and written back later; on this project's virtualised
// benchmark machine that copy alone cost ~1 s of CPU per GiB, several times what
// `cp` pays when it reuses pages (the first touch of a guest page is a host fault),
// and a 1 GiB upload evicted 1 GiB of hot files to make room for data that is
// rarely read back at once. With O_DIRECT the disk reads the buffer itself:
// `dd oflag=direct` wrote 1 GiB in 0.4 s with 0.14 s of system CPU where buffered
// writes plus fsync took 1.4–2.8 s with 1.2–2.5 s (scripts/bench-upload.sh measures
// coffer's uploads the same way).
//
// Small files stay in the page cache (they are likely read soon, and O_DIRECT's
// synchronous writes would cost them latency): a put switches to O_DIRECT once
// directAfter bytes are written, at a write whose offset, length and buffer address
// are all aligned to directAlign, and switches back for a final unaligned write.
// Where the filesystem refuses O_DIRECT (EINVAL) the put goes on buffered. The put
// still ends with fsync: O_DIRECT does not flush the device's cache or the file's
// metadata.
const (
	directAfter = 4 << 20
	// directAlign satisfies both 512-byte and 4 KiB logical block devices.
	directAlign = 4096
)

// directWriter writes a file as described above. Not safe for concurrent use.
type directWriter struct {
	f       *os.File
	n       int64 // bytes written
	direct  bool  // O_DIRECT is on
	refused bool  // the filesystem refused O_DIRECT: stay buffered
	used    bool  // some bytes went out with O_DIRECT (for tests)
}

// Write implements io.Writer.
func (w *directWriter) Write(p []byte) (int, error) {
	want := !w.refused && w.n >= directAfter && aligned(w.n, p)
	if want != w.direct {
		if err := setDirect(w.f, want); err != nil {
			if !want {
				return 0, err // cannot go back to buffered: this write would fail
			}
			w.refused = true
		} else {
			w.direct = want
		}
	}
	n, err := w.f.Write(p)
	if err != nil && n == 0 && w.direct && errors.Is(err, errDirectRefused) {
		w.refused = true
		if err := setDirect(w.f, false); err != nil {
			return 0, err
		}
		w.direct = false
		n, err = w.f.Write(p)
	}
	w.used = w.used || (w.direct && n > 0)
	w.n += int64(n)
	return n, err
}

// aligned reports whether a write of p at offset off may use O_DIRECT.
func aligned(off int64, p []byte) bool {
	return len(p) > 0 && off%directAlign == 0 && len(p)%directAlign == 0 &&
		uintptr(unsafe.Pointer(unsafe.SliceData(p)))%directAlign == 0
}
