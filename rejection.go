package coffer

import "time"

// Rejection records an upload or replace refused because the virus scanner found
// something in it. Nothing of the upload was kept.
type Rejection struct {
	ID       string
	Time     time.Time
	BucketID string
	// Name is the file's name as far as it was known when the verdict came: the
	// metadata name if it came first, else the multipart filename; for a replace the
	// file's current name unless a new one was given.
	Name string
	// FileID is the id of the file replaced, or the id the uploader gave, if any.
	FileID string
	UserID string
	Role   string
	// Signature is what the scanner found, e.g. "Eicar-Test-Signature".
	Signature string
	// Size is how many bytes of the upload were read before the verdict.
	Size int64
}
