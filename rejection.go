package coffer

import "time"

// Rejection records an upload or replace refused because the virus scanner found
// something in it. Nothing of the upload was kept.
type Rejection struct {
	ID       string    `json:"id"`
	Time     time.Time `json:"time"`
	BucketID string    `json:"bucketId"`
	// Name is the file's name as far as it was known when the verdict came: the
	// metadata name if it came first, else the multipart filename; for a replace the
	// file's current name unless a new one was given.
	Name string `json:"name"`
	// FileID is the id of the file replaced, or the id the uploader gave, if any.
	FileID string `json:"fileId,omitempty"`
	UserID string `json:"uploadedByUserId,omitempty"`
	Role   string `json:"role"`
	// Signature is what the scanner found, e.g. "Eicar-Test-Signature".
	Signature string `json:"signature"`
	// Size is how many bytes of the upload were read before the verdict.
	Size int64 `json:"size"`
}
