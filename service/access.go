package service

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/access"
)

// LoadRules installs the permission rules at start: a rules file, when given, is
// validated and stored (it is the deployment's source of truth); otherwise the rules
// last stored through the admin API are used; with neither, there are none.
func (s *Service) LoadRules(ctx context.Context, fileDoc []byte) error {
	if fileDoc != nil {
		return s.putRules(ctx, fileDoc)
	}
	return s.ReloadRules(ctx)
}

// storedRules compiles the rules stored in the metadata database (none: empty rules).
func (s *Service) storedRules(ctx context.Context) (*access.RuleSet, error) {
	doc, err := s.meta.GetRules(ctx)
	if coffer.ErrorCode(err) == coffer.ENOTFOUND {
		return access.Empty(), nil
	}
	if err != nil {
		return nil, err
	}
	return access.Parse(doc)
}

// ReloadRules installs the rules stored in the metadata database, after another node
// changed them or a cache flush. On failure the rules in force stay and the error is
// logged: a node never drops to "no rules" because of a passing database error; and
// RefreshRules tries again soon, since the notification that asked for the reload
// will not come again.
func (s *Service) ReloadRules(ctx context.Context) error {
	s.rulesMu.Lock()
	defer s.rulesMu.Unlock()
	rs, err := s.storedRules(ctx)
	if err != nil {
		s.rulesStale.Store(true)
		select {
		case s.rulesKick <- struct{}{}:
		default:
		}
		s.log.Error("reloading the permission rules failed; keeping the rules in force and retrying", "err", err)
		return err
	}
	s.rulesStale.Store(false)
	s.rules.Store(rs)
	return nil
}

// RefreshRules runs until ctx ends. It reloads the rules every interval, a safety net
// like the metadata cache's TTL (changes arrive at once: through this node, or by
// notification from others), and after a failed reload it tries again after 1 s,
// doubling up to interval, until one succeeds.
func (s *Service) RefreshRules(ctx context.Context, interval time.Duration) {
	interval = max(interval, time.Second)
	backoff := time.Second
	for {
		wait := interval
		if s.rulesStale.Load() {
			wait = min(backoff, interval)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.rulesKick: // a reload failed: wait the backoff instead
			t.Stop()
			continue
		case <-t.C:
		}
		if s.ReloadRules(ctx) != nil {
			backoff = min(backoff*2, interval)
		} else {
			backoff = time.Second
		}
	}
}

// Rules returns the rules document in force (admin).
func (s *Service) Rules(p *coffer.Principal) ([]byte, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	return s.rules.Load().Document(), nil
}

// SetRules validates, stores and installs a new rules document (admin). Errors name
// the offending path in the document.
func (s *Service) SetRules(ctx context.Context, p *coffer.Principal, doc []byte) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	return s.putRules(ctx, doc)
}

// ValidateRules checks a rules document without installing it (admin) and returns
// it in the canonical JSON form it would be stored in. Errors are those of SetRules.
func (s *Service) ValidateRules(p *coffer.Principal, doc []byte) ([]byte, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	rs, err := access.Parse(doc)
	if err != nil {
		return nil, err
	}
	return rs.Document(), nil
}

func (s *Service) putRules(ctx context.Context, doc []byte) error {
	rs, err := access.Parse(doc)
	if err != nil {
		return err
	}
	if err := s.meta.PutRules(ctx, rs.Document()); err != nil {
		return err
	}
	// Install what is stored now rather than rs: another node's rules stored after
	// ours, and reloaded here before this line, must not be overwritten by older ones.
	if s.ReloadRules(ctx) != nil {
		s.rulesMu.Lock()
		s.rules.Store(rs) // ours are stored; RefreshRules brings any newer ones
		s.rulesMu.Unlock()
	}
	return nil
}

// permission returns p's permission for a on bucket b (nil: none). Admins need none.
func (s *Service) permission(p *coffer.Principal, b *coffer.Bucket, a access.Action) *access.Permission {
	return s.rules.Load().Permission(p.Role, b.ID, a)
}

// canRead: admins, anyone for a public bucket, or a read rule whose filter matches.
func (s *Service) canRead(p *coffer.Principal, b *coffer.Bucket, f *coffer.File) bool {
	if p.Admin || b.Public {
		return true
	}
	perm := s.permission(p, b, access.Read)
	return perm != nil && perm.Filter.Match(f, p.Session)
}

// unreadable is the answer to p for a file it may not read, or that does not exist.
// As with hasura-storage over Hasura's permissions: a role with no read permission at
// all (no read rule on any bucket, and no public bucket to read) is refused with
// EFORBIDDEN; a role that may read some files gets "file not found", whether the file
// is missing, outside its filter or in a bucket it may not read. The answer never
// depends on the file, so it reveals nothing about its existence.
func (s *Service) unreadable(ctx context.Context, p *coffer.Principal) error {
	if p.Admin || s.cfg.HideForbidden || s.rules.Load().Grants(p.Role, access.Read) {
		return errFileNotFound()
	}
	bs, err := s.meta.ListBuckets(ctx)
	if err != nil {
		return err
	}
	for _, b := range bs {
		if b.Public {
			return errFileNotFound()
		}
	}
	return errNotAuthorized()
}

// allowed checks a on an existing file f the caller can already read. A role with no
// permission for a on any bucket gets EFORBIDDEN (hasura-storage: Hasura refuses the
// mutation); one whose permission does not cover this file gets "file not found"
// (Hasura's mutation matches no row).
func (s *Service) allowed(p *coffer.Principal, b *coffer.Bucket, f *coffer.File, a access.Action) (*access.Permission, error) {
	if p.Admin {
		return nil, nil
	}
	perm := s.permission(p, b, a)
	if perm != nil && perm.Filter.Match(f, p.Session) {
		return perm, nil
	}
	if s.cfg.HideForbidden || s.rules.Load().Grants(p.Role, a) {
		return nil, errFileNotFound()
	}
	return nil, errNotAuthorized()
}

// errNotAuthorized is hasura-storage's answer to a request its role may not make, with
// or without credentials (uploads, listings, and the cases above).
func errNotAuthorized() error { return coffer.Errorf(coffer.EFORBIDDEN, "you are not authorized") }

// checkNew enforces a permission's check on the file as it will be stored.
func checkNew(p *coffer.Principal, perm *access.Permission, f *coffer.File) error {
	if perm == nil || perm.Check.Match(f, p.Session) {
		return nil
	}
	return errNotAuthorized() // hasura-storage: Hasura's permission check failed
}

// applyPresets forces a role's presets onto a new file, overriding the client.
func applyPresets(p *coffer.Principal, perm *access.Permission, f *coffer.File) error {
	if perm == nil {
		return nil
	}
	for field, o := range perm.Presets {
		v, ok := o.Resolve(coffer.FieldKinds[field], p.Session)
		if !ok {
			return coffer.Errorf(coffer.EFORBIDDEN, "preset %s needs session variable %s, which the token lacks", field, o.Var)
		}
		if field == coffer.FieldUploadedBy {
			f.UploadedByUserID = v.Str
		}
	}
	return nil
}
