package meta

import "github.com/coffer/coffer"

// Precondition makes a write by name (Store.PutFileByName) conditional, as HTTP's
// If-Match and If-None-Match make a PUT conditional. The zero value writes
// unconditionally: it creates the name-addressed file or replaces it.
//
// Entity tags compare strongly and exactly: a face passes the tag as the store keeps
// it (quoted, see coffer.File.ETag). "*" matches any existing file.
type Precondition struct {
	// IfMatch, when not "", requires an existing name-addressed file: any file for
	// "*", otherwise one whose ETag equals IfMatch.
	IfMatch string
	// IfNoneMatch, when not "", requires that no existing name-addressed file
	// matches: none may exist for "*", otherwise the existing file's ETag must differ.
	IfNoneMatch string
}

// Check returns EPRECONDITION unless p holds for existing, the name-addressed file the
// write would replace (nil when there is none).
func (p Precondition) Check(existing *coffer.File) error {
	if p.IfMatch != "" && !etagMatches(p.IfMatch, existing) {
		return coffer.Errorf(coffer.EPRECONDITION, "If-Match %s: no such file version", p.IfMatch)
	}
	if p.IfNoneMatch != "" && etagMatches(p.IfNoneMatch, existing) {
		return coffer.Errorf(coffer.EPRECONDITION, "If-None-Match %s: the file exists", p.IfNoneMatch)
	}
	return nil
}

// CreateOnly reports whether p can only hold when no file exists (If-None-Match: *):
// a write that loses a race to create the name then fails rather than replacing.
func (p Precondition) CreateOnly() bool { return p.IfNoneMatch == "*" }

// etagMatches reports whether tag ("*" or an entity tag) matches f (nil: no file).
func etagMatches(tag string, f *coffer.File) bool {
	return f != nil && (tag == "*" || tag == f.ETag)
}
