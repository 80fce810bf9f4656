package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/access"
)

// AccessQuery asks whether a role may do something: CheckAccess answers it with the
// rules in force, as the requests of such a principal would be answered.
type AccessQuery struct {
	Role, UserID string
	// Session holds more session variables (coffer.SessionVarPrefix names, any
	// case); the role and user id are added as coffer.SessionRole and SessionUserID.
	Session  map[string]string
	BucketID string // may be "" when FileID is given: the file's bucket
	// Action is "read", "create", "update" or "delete" (or a rules document's
	// spelling of one: upload, insert, select, replace).
	Action string
	// FileID, for read, update and delete, is a stored file to check against the
	// rule's filter; "": the answer is whether the role may do it to some files.
	FileID string
	// The file as it would be stored, for create (and Name for update, a rename):
	// checked against the rule's check after its presets.
	Name     string
	Metadata json.RawMessage
	Size     int64
	MimeType string
}

// AccessAnswer is CheckAccess's answer: whether the action is allowed, the path in
// the rules document of the rule that decided ("rules[0].read"; "rules[0]" for a rule
// that does not list the action; "" when none applied), and why, for a person.
type AccessAnswer struct {
	Allowed      bool
	Rule, Reason string
}

// CheckAccess answers q with the rules in force (admin), evaluated by package access
// as every request is. EINVALID for an unknown action, a session variable whose
// name lacks coffer.SessionVarPrefix, bad metadata or a file of another bucket;
// ENOTFOUND for a missing bucket or file.
func (s *Service) CheckAccess(ctx context.Context, p *coffer.Principal, q AccessQuery) (AccessAnswer, error) {
	if err := requireAdmin(p); err != nil {
		return AccessAnswer{}, err
	}
	a, ok := access.ParseAction(q.Action)
	if !ok {
		return AccessAnswer{}, coffer.InvalidField("action", fmt.Sprintf("unknown action %q (read, create, update or delete)", q.Action))
	}
	who, err := queryPrincipal(q)
	if err != nil {
		return AccessAnswer{}, err
	}
	if q, err = cleanQuery(q); err != nil {
		return AccessAnswer{}, err
	}
	f, b, err := s.queryTarget(ctx, q, a)
	if err != nil {
		return AccessAnswer{}, err
	}
	switch {
	case q.Role == coffer.AdminRole && s.cfg.JWTAdminRole:
		return AccessAnswer{Allowed: true, Reason: "role admin bypasses the rules (the admin secret's role, and a JWT's: --jwt-admin-role is on)"}, nil
	case a == access.Read && b.Public:
		return AccessAnswer{Allowed: true, Reason: fmt.Sprintf("bucket %s is public: anyone may read its files", b.ID)}, nil
	case f != nil && (a == access.Replace || a == access.Delete) && !b.Public:
		// Updates and deletes find the file as a read does first (GetFile): a file
		// the role may not read is refused whatever its update or delete rule says.
		if ans, ok := s.readFirst(who, q, a, f, b); !ok {
			return ans, nil
		}
	}
	d := s.rules.Load().Decide(q.Role, b.ID, a)
	ans := AccessAnswer{Rule: d.Path}
	switch {
	case d.Path == "":
		ans.Reason = fmt.Sprintf("no rule for role %s on bucket %s", q.Role, b.ID)
	case d.Permission == nil:
		ans.Reason = fmt.Sprintf("%s, the first rule for role %s on bucket %s (buckets %s), has no %s action",
			d.Path, q.Role, b.ID, strings.Join(d.Buckets, ", "), a)
	default:
		ans.Allowed, ans.Reason = judge(who, d, a, f, b, q)
	}
	return ans, nil
}

// queryPrincipal returns the principal q describes: its role, user id and session.
func queryPrincipal(q AccessQuery) (*coffer.Principal, error) {
	session := map[string]string{coffer.SessionRole: q.Role}
	for k, v := range q.Session {
		if !access.IsSessionVar(k) {
			return nil, coffer.InvalidField("session", fmt.Sprintf("session variable %q is not named %s*", k, coffer.SessionVarPrefix))
		}
		session[strings.ToLower(k)] = v
	}
	if q.UserID != "" {
		session[coffer.SessionUserID] = q.UserID
	}
	if q.Role == "" {
		return nil, coffer.InvalidField("role", "role is empty")
	}
	return &coffer.Principal{Role: q.Role, UserID: session[coffer.SessionUserID], Session: session}, nil
}

// cleanQuery validates the name and metadata of the file as it would be stored, as
// an upload or rename would, and returns q with them in their stored form.
func cleanQuery(q AccessQuery) (AccessQuery, error) {
	var err error
	if q.Name != "" {
		if q.Name, err = coffer.CleanName(q.Name); err != nil {
			return q, err
		}
	}
	if q.Metadata != nil {
		if q.Metadata, err = coffer.ValidateMetadata(q.Metadata); err != nil {
			return q, err
		}
	}
	return q, nil
}

// queryTarget returns the file q names (nil for none, and for create) and the bucket
// the question is about.
func (s *Service) queryTarget(ctx context.Context, q AccessQuery, a access.Action) (*coffer.File, *coffer.Bucket, error) {
	if q.FileID == "" || a == access.Upload {
		b, err := s.meta.GetBucket(ctx, q.BucketID)
		return nil, b, err
	}
	f, b, err := s.lookup(ctx, q.FileID)
	if err != nil {
		return nil, nil, err
	}
	if q.BucketID != "" && q.BucketID != b.ID {
		return nil, nil, coffer.InvalidField("bucketId", fmt.Sprintf("file %s is in bucket %s, not %s", f.ID, b.ID, q.BucketID))
	}
	return f, b, nil
}

// judge applies the permission d grants to the file of the question: the filter to
// the stored file f (read, update, delete), the check to f as an update would store
// it (renamed to q.Name if given), and presets, size cap and check to a new file
// (create) in bucket b.
func judge(p *coffer.Principal, d access.Decision, a access.Action, f *coffer.File, b *coffer.Bucket, q AccessQuery) (bool, string) {
	perm := d.Permission
	switch {
	case a == access.Upload:
		return judgeNew(p, d, b, q)
	case f == nil:
		return true, fmt.Sprintf("%s allows role %s to %s the files its filter matches (give a file id to check one)", d.Path, p.Role, a)
	}
	if why := access.Explain(perm.Filter, f, p.Session); why != "" {
		return false, "the file does not match " + d.Path + ".filter: " + why
	}
	if a == access.Replace {
		projected := *f
		if q.Name != "" {
			projected.Name = q.Name
		}
		if why := access.Explain(perm.Check, &projected, p.Session); why != "" {
			return false, "the file as changed does not pass " + d.Path + ".check: " + why
		}
	}
	return true, d.Path + " allows it: the file matches its filter"
}

// judgeNew checks a new file in bucket b as an upload would: presets, max_size,
// check.
func judgeNew(p *coffer.Principal, d access.Decision, b *coffer.Bucket, q AccessQuery) (bool, string) {
	f := &coffer.File{BucketID: b.ID, Name: q.Name, Size: q.Size, MimeType: q.MimeType, Metadata: q.Metadata, IsUploaded: true}
	if err := applyPresets(p, d.Permission, f); err != nil {
		return false, d.Path + ".presets: " + coffer.ErrorMessage(err)
	}
	if m := d.Permission.MaxSize; m > 0 && q.Size > m {
		return false, fmt.Sprintf("size %d is over %s.max_size (%d)", q.Size, d.Path, m)
	}
	if why := access.Explain(d.Permission.Check, f, p.Session); why != "" {
		return false, "the new file does not pass " + d.Path + ".check: " + why
	}
	return true, d.Path + " allows it (presets applied; the bucket's own size and type limits still apply)"
}

// readFirst answers whether the role of q may read file f of bucket b, which an
// update or delete (action a) does first; when it may not, the answer says so.
func (s *Service) readFirst(who *coffer.Principal, q AccessQuery, a access.Action, f *coffer.File, b *coffer.Bucket) (AccessAnswer, bool) {
	d := s.rules.Load().Decide(q.Role, b.ID, access.Read)
	ans := AccessAnswer{Rule: d.Path}
	prefix := fmt.Sprintf("to %s a file a role must first be able to read it: ", a)
	switch {
	case d.Path == "":
		ans.Reason = prefix + fmt.Sprintf("no rule for role %s on bucket %s", q.Role, b.ID)
	case d.Permission == nil:
		ans.Reason = prefix + fmt.Sprintf("%s, the first rule for role %s on bucket %s, has no read action", d.Path, q.Role, b.ID)
	default:
		why := access.Explain(d.Permission.Filter, f, who.Session)
		if why == "" {
			return AccessAnswer{}, true
		}
		ans.Reason = prefix + "the file does not match " + d.Path + ".filter: " + why
	}
	return ans, false
}
