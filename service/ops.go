package service

import (
	"context"
	"time"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/imaging"
)

// SweepReport says what a sweep removed.
type SweepReport struct {
	AbandonedUploads int
	TempFiles        int
	OrphanBlobs      []string
}

// Sweep removes what crashes and failures leave behind: upload intents older than
// staleBefore (with their blobs and not-uploaded rows), driver temp files older than
// staleBefore, and blobs that nothing references.
func (s *Service) Sweep(ctx context.Context, staleBefore time.Time) (SweepReport, error) {
	var rep SweepReport
	intents, err := s.meta.StaleIntents(ctx, staleBefore)
	if err != nil {
		return rep, err
	}
	for _, in := range intents {
		if err := s.meta.AbortUpload(ctx, in.BlobKey); err != nil {
			return rep, err
		}
		rep.AbandonedUploads++
	}
	if rep.TempFiles, err = s.blobs.SweepTemp(ctx, staleBefore); err != nil {
		return rep, err
	}
	orphans, err := s.DeleteOrphans(ctx, coffer.AdminPrincipal())
	rep.OrphanBlobs = orphans
	return rep, err
}

// StartupSweep runs at start: on a single node every intent and temp file is
// abandoned; with shared stores only those older than StaleUploadAfter are.
func (s *Service) StartupSweep(ctx context.Context) (SweepReport, error) {
	return s.Sweep(ctx, s.staleBefore())
}

func (s *Service) staleBefore() time.Time {
	if s.cfg.SingleNode {
		return s.now()
	}
	return s.now().Add(-s.cfg.StaleUploadAfter)
}

// RunSweeper sweeps every interval until ctx ends.
func (s *Service) RunSweeper(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			rep, err := s.Sweep(ctx, s.now().Add(-s.cfg.StaleUploadAfter))
			if err != nil && ctx.Err() == nil {
				s.log.Error("sweep failed", "err", err)
			} else if rep.AbandonedUploads+rep.TempFiles+len(rep.OrphanBlobs) > 0 {
				s.log.Info("sweep", "abandoned_uploads", rep.AbandonedUploads, "temp_files", rep.TempFiles, "orphan_blobs", len(rep.OrphanBlobs))
			}
		}
	}
}

// ListOrphans returns blob keys that no file row and no upload intent references.
func (s *Service) ListOrphans(ctx context.Context, p *coffer.Principal) ([]string, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	orphans := []string{}
	err := s.blobs.List(ctx, "", func(a blob.Attrs) error {
		orphan, err := s.orphan(ctx, a.Key)
		if orphan {
			orphans = append(orphans, a.Key)
		}
		return err
	})
	return orphans, err
}

// orphan reports whether nothing needs blob key any more: a file's blob that no row
// and no upload intent references, or a cached image variant of a file that is gone.
func (s *Service) orphan(ctx context.Context, key string) (bool, error) {
	if id, ok := imaging.VariantFileID(key); ok {
		_, err := s.meta.GetFile(ctx, id)
		if code := coffer.ErrorCode(err); code == coffer.ENOTFOUND || code == coffer.EINVALID {
			return true, nil
		}
		return false, err
	}
	ref, err := s.meta.BlobReferenced(ctx, key)
	return err == nil && !ref, err
}

// DeleteOrphans deletes the blobs ListOrphans finds (re-checking each one first).
func (s *Service) DeleteOrphans(ctx context.Context, p *coffer.Principal) ([]string, error) {
	orphans, err := s.ListOrphans(ctx, p)
	if err != nil {
		return nil, err
	}
	deleted := []string{}
	for _, key := range orphans {
		orphan, err := s.orphan(ctx, key)
		if err != nil {
			return deleted, err
		}
		if !orphan {
			continue
		}
		s.content.Forget(key)
		if err := s.blobs.Delete(ctx, key); err != nil {
			return deleted, err
		}
		deleted = append(deleted, key)
	}
	return deleted, nil
}

// ListBrokenMetadata returns uploaded files whose blob is missing.
func (s *Service) ListBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	broken := []*coffer.File{}
	err := s.meta.EachFile(ctx, func(f *coffer.File) error {
		if !f.IsUploaded {
			return nil
		}
		_, err := s.blobs.Stat(ctx, f.BlobKey)
		switch coffer.ErrorCode(err) {
		case "":
			return nil
		case coffer.ENOTFOUND:
			broken = append(broken, f)
			return nil
		}
		return err
	})
	return broken, err
}

// DeleteBrokenMetadata deletes the rows ListBrokenMetadata finds, re-checking each
// first so a file replaced meanwhile (new blob) is kept.
func (s *Service) DeleteBrokenMetadata(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error) {
	broken, err := s.ListBrokenMetadata(ctx, p)
	if err != nil {
		return nil, err
	}
	deleted := []*coffer.File{}
	for _, f := range broken {
		cur, err := s.meta.GetFile(ctx, f.ID)
		if coffer.ErrorCode(err) == coffer.ENOTFOUND {
			continue
		}
		if err != nil {
			return deleted, err
		}
		if _, err := s.blobs.Stat(ctx, cur.BlobKey); cur.BlobKey != f.BlobKey || coffer.ErrorCode(err) != coffer.ENOTFOUND {
			continue
		}
		if _, err := s.meta.DeleteFile(coffer.WithActor(ctx, p), f.ID); err != nil && coffer.ErrorCode(err) != coffer.ENOTFOUND {
			return deleted, err
		}
		deleted = append(deleted, f)
	}
	return deleted, nil
}

// ListNotUploaded returns files whose upload never completed.
func (s *Service) ListNotUploaded(ctx context.Context, p *coffer.Principal) ([]*coffer.File, error) {
	if err := requireAdmin(p); err != nil {
		return nil, err
	}
	return s.meta.ListNotUploaded(ctx, 1000)
}

// DefaultSweepAge is the age past which a sweep asked for now treats uploads as
// abandoned when the caller names none (both faces' default).
const DefaultSweepAge = 24 * time.Hour

// SweepOlderThan runs the sweeper now for p (admin), treating uploads older than age
// as abandoned. EINVALID if age is negative.
func (s *Service) SweepOlderThan(ctx context.Context, p *coffer.Principal, age time.Duration) (SweepReport, error) {
	if err := requireAdmin(p); err != nil {
		return SweepReport{}, err
	}
	if age < 0 {
		return SweepReport{}, coffer.InvalidField("olderThan", "olderThan must not be negative")
	}
	return s.Sweep(ctx, time.Now().Add(-age))
}
