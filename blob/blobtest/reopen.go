package blobtest

import (
	"bytes"
	"fmt"
	"sort"
	"testing"

	"github.com/coffer/coffer/blob"
)

// RunReopen checks that what a driver stores outlives the driver: blobs written, then
// overwritten or deleted, read back the same after the driver is closed and another is
// opened over the same storage (fsblob: the same directory; s3blob: the same bucket).
// newStorage prepares fresh, empty storage and returns open, which opens a new driver
// over it at each call. Like Run, every test runs on the driver and through blob.Store.
// memblob keeps nothing across Close and does not run it.
func RunReopen(t *testing.T, newStorage func(t *testing.T) (open func() blob.Driver)) {
	for _, via := range viaBoth {
		t.Run(via.name, func(t *testing.T) {
			for _, tc := range reopenTests {
				t.Run(tc.name, func(t *testing.T) {
					open := newStorage(t)
					tc.fn(t, func() blob.Driver { return via.wrap(open()) })
				})
			}
		})
	}
}

// reopenTests are the durability tests; fn gets open, and closes what it opens.
var reopenTests = []struct {
	name string
	fn   func(t *testing.T, open func() blob.Driver)
}{
	{"Survives", testReopenSurvives},
	{"MultipartSurvives", testReopenMultipart},
}

// reopenData is what testReopenSurvives stores: key → content, nil for deleted keys.
func reopenData() map[string][]byte {
	return map[string][]byte{
		"r/nested/deep/one": Data(1<<20+7, 11),
		"r/empty":           {},
		"r/overwritten":     []byte("second version"),
		"r/deleted":         nil,
		"top":               Data(3000, 12),
	}
}

func testReopenSurvives(t *testing.T, open func() blob.Driver) {
	want := reopenData()
	d := open()
	put(t, d, "r/overwritten", []byte("first, longer version"))
	put(t, d, "r/deleted", []byte("soon gone"))
	for k, data := range want {
		if data != nil {
			put(t, d, k, data)
		}
	}
	if err := d.Delete(ctx, "r/deleted"); err != nil {
		t.Fatal(err)
	}
	closeDriver(t, d)

	d = open()
	checkReopened(t, d, want)
	if err := d.Delete(ctx, "top"); err != nil {
		t.Fatal(err)
	}
	want["top"] = nil
	closeDriver(t, d)

	d = open()
	defer d.Close()
	checkReopened(t, d, want)
}

// checkReopened checks that d holds exactly want's live keys, with their contents.
func checkReopened(t *testing.T, d blob.Driver, want map[string][]byte) {
	t.Helper()
	var live []string
	for k, data := range want {
		if data == nil {
			mustNotExist(t, d, k)
			continue
		}
		live = append(live, k)
		if got := read(t, d, k); !bytes.Equal(got, data) {
			t.Errorf("%s after reopening: %d bytes, want %d", k, len(got), len(data))
		}
		if a, err := d.Stat(ctx, k); err != nil || a.Size != int64(len(data)) {
			t.Errorf("Stat(%s) after reopening: %+v, %v", k, a, err)
		}
	}
	if got, want := fmt.Sprint(list(t, d, "")), fmt.Sprint(sorted(live)); got != want {
		t.Errorf("List after reopening = %s, want %s", got, want)
	}
}

// sorted returns keys sorted.
func sorted(keys []string) []string {
	sort.Strings(keys)
	return keys
}

// closeDriver closes d, failing the test if that fails.
func closeDriver(t *testing.T, d blob.Driver) {
	t.Helper()
	if err := d.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}
