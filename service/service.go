// Package service implements coffer's use cases over a metadata store and a blob
// store: access checks, then metadata, then blobs. No HTTP and no SQL here.
//
// Write ordering keeps crashes harmless: an upload intent is recorded before a blob is
// written, the blob is durable before the file row commits (removing the intent in the
// same transaction), and a replaced or deleted blob is removed only after the row no
// longer points at it. Whatever a crash leaves behind is an intent or an unreferenced
// blob, which Sweep removes.
package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/access"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/meta"
)

// Config holds the service settings.
type Config struct {
	// StaleUploadAfter: an upload intent older than this is treated as abandoned.
	StaleUploadAfter time.Duration
	// SingleNode: no other process shares the stores (embedded SQLite), so at start
	// every intent and temp file is abandoned.
	SingleNode bool
	// HideForbidden answers ENOTFOUND instead of EFORBIDDEN when a role has no
	// permission at all for an action on files, so that no answer about a file id
	// differs from a missing file's (hasura-storage answers 403 there).
	HideForbidden bool
	// ETag is the hash an upload's ETag is made of: ETagMD5 or ETagBLAKE3.
	ETag string
	// JWTAdminRole: a JWT of role "admin" is an admin (auth.Config's), as CheckAccess
	// must know to answer for that role.
	JWTAdminRole bool
}

// The ETag hashes. MD5 is hasura-storage's (the S3 ETag of a single-part put), so
// clients that compare it with their own MD5 keep working; it runs at ~0.9 GB/s on
// one core, slower than a disk, and is the largest CPU cost of a large upload.
// BLAKE3 runs at ~5.5 GB/s here and is a cryptographic hash too (the ETag is the
// whole 256-bit digest, so `b3sum` checks a download against it).
const (
	ETagMD5    = "md5"
	ETagBLAKE3 = "blake3"
)

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{StaleUploadAfter: 24 * time.Hour, ETag: ETagMD5, JWTAdminRole: true}
}

// Validate checks c.
func (c Config) Validate() error {
	if c.StaleUploadAfter < time.Minute {
		return coffer.Errorf(coffer.EINVALID, "stale upload age must be at least 1m")
	}
	if c.ETag != ETagMD5 && c.ETag != ETagBLAKE3 {
		return coffer.Errorf(coffer.EINVALID, "ETag hash %q: want %s or %s", c.ETag, ETagMD5, ETagBLAKE3)
	}
	return nil
}

// Service is coffer's application layer.
type Service struct {
	cfg      Config
	meta     meta.Store
	blobs    *blob.Store
	content  ContentCache
	variants VariantCache
	images   imaging.Engine // nil: transformations are not available
	log      *slog.Logger
	now      func() time.Time
	rules    atomic.Pointer[access.RuleSet]
	// rulesMu serializes reading the stored rules with installing them, so the last
	// rules installed were read last; rulesStale marks a failed reload, which
	// RefreshRules retries (rulesKick wakes it).
	rulesMu    sync.Mutex
	rulesStale atomic.Bool
	rulesKick  chan struct{}
	webhooks   *Webhooks // nil: webhook administration is off
	scanning   *Scanning // nil: uploads are not scanned
	crashes    *quarantine
	shed       *warnLimit // image queue full
	overQuota  *warnLimit // uploads past the tenant's quota
}

// New returns a Service over the given stores, reading through caches (a nil one is
// off).
func New(cfg Config, m meta.Store, b *blob.Store, caches Caches, log *slog.Logger) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	caches = caches.orUncached(b)
	s := &Service{cfg: cfg, meta: m, blobs: b, content: caches.Content, variants: caches.Variants, log: log, now: time.Now,
		rulesKick: make(chan struct{}, 1)}
	s.crashes = newQuarantine(func() time.Time { return s.now() }, log)
	now := func() time.Time { return s.now() }
	s.shed = newWarnLimit("image queue full: transformations refused with 503 and Retry-After (see --image-workers, --image-queue)", now, log)
	s.overQuota = newWarnLimit("uploads refused with 507: the tenant's storage quota is reached", now, log)
	s.rules.Store(access.Empty())
	return s, nil
}

// Reader is an open file's contents: a blob reader, named here so that faces need
// not import the blob package.
type Reader = blob.Reader

// Ping returns an error if the metadata store does not answer (health checks).
func (s *Service) Ping(ctx context.Context) error { return s.meta.Ping(ctx) }

// newBlobKey returns a fresh, never reused blob key "f/<2 hex>/<32 hex>". Keys are
// independent of file ids (a multipart upload may name its file after the bytes
// arrived) and every replace writes a new blob, so readers never see a half-written one.
func newBlobKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "f/" + h[:2] + "/" + h
}

// RequireAdmin refuses non-admin principals as every admin-only use case does: for
// the calls that app answers without the service (a node's cache statistics).
func RequireAdmin(p *coffer.Principal) error { return requireAdmin(p) }

// ErrAdminRequired is the cause (errors.Is) of the EUNAUTHORIZED that an admin-only
// use case answers a caller without credentials. Its message names no credential:
// each face knows its own (the hasura face rewords it with x-hasura-admin-secret).
var ErrAdminRequired = errors.New("admin credentials required")

// requireAdmin refuses non-admin principals: 401 without credentials
// (ErrAdminRequired), 403 with.
func requireAdmin(p *coffer.Principal) error {
	if p.Admin {
		return nil
	}
	if p.Anonymous {
		return &coffer.Error{Code: coffer.EUNAUTHORIZED, Message: "this action needs the admin's credentials", Err: ErrAdminRequired}
	}
	return coffer.Errorf(coffer.EFORBIDDEN, "this action is not allowed for role %q", p.Role)
}

// errFileNotFound is what a missing file and an unreadable one both answer, so that
// existence never leaks.
func errFileNotFound() error { return coffer.Errorf(coffer.ENOTFOUND, "file not found") }

// deleteBlob removes a blob that no row references any more; failures are logged
// and left to the sweeper.
func (s *Service) deleteBlob(ctx context.Context, key string) {
	ctx = context.WithoutCancel(ctx)
	if err := s.blobs.Delete(ctx, key); err != nil {
		s.log.Warn("blob delete failed; the sweeper will retry", "key", key, "err", err)
	}
	// After the delete: a read that held the old row could otherwise open the blob
	// between the two and keep it open in the content cache.
	s.content.Forget(key)
}
