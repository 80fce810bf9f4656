package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/coffer/coffer"
	"github.com/coffer/coffer/blob"
	"github.com/coffer/coffer/blob/fsblob"
	"github.com/coffer/coffer/blob/s3blob"
	"github.com/coffer/coffer/cache"
	"github.com/coffer/coffer/meta"
	"github.com/coffer/coffer/meta/postgres"
	"github.com/coffer/coffer/meta/sqlite"
)

// stores are the opened backends. meta is the cached, counted store the service uses;
// db counts the calls that reach the database under the cache. content and variants
// are the caches the service reads blobs and transformed images through.
type stores struct {
	meta meta.Store
	// base is the database's store itself, under the counter and the cache: the one
	// tenants' views (meta.Tenanted) and the tenant registry come from.
	base     meta.Store
	db       *meta.Counting
	cache    *cache.Meta
	blobs    *blob.Store
	content  *cache.Content
	variants *cache.Variants
	lock     *os.File
	// outbox is the database's webhook outbox (the uncached store).
	outbox meta.Outbox
	// rejections records uploads refused by the virus scanner (the uncached store).
	rejections meta.Rejections
}

// migrator is the optional capability of a metadata store to apply its migrations.
type migrator interface{ Migrate(context.Context) error }

// Close closes the blob store, the metadata store and the data dir lock.
func (s *stores) Close() error {
	var errs []error
	if s.blobs != nil {
		errs = append(errs, s.blobs.Close())
	}
	if s.meta != nil {
		errs = append(errs, s.meta.Close())
	}
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}

// openStores opens and migrates the metadata store and opens the blob store, chosen
// by an explicit switch on the configuration.
func openStores(ctx context.Context, c *Config) (*stores, error) {
	st := &stores{}
	if c.UsesSQLite() || c.S3Endpoint == "" {
		if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
		lock, err := lockDataDir(c.DataDir)
		if err != nil {
			return nil, err
		}
		st.lock = lock
	}
	if err := st.openMeta(ctx, c); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.cacheMeta(c); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.openBlobs(ctx, c); err != nil {
		st.Close()
		return nil, err
	}
	return st, nil
}

// Migrate opens the metadata database of c, applies its migrations and closes it:
// all that `coffer migrate` does.
func Migrate(ctx context.Context, c Config) error {
	if c.UsesSQLite() {
		if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
			return err
		}
	}
	st := &stores{}
	defer st.Close()
	return st.openMeta(ctx, &c)
}

// openMeta opens the metadata database, checks its optional capabilities and applies
// its migrations.
func (st *stores) openMeta(ctx context.Context, c *Config) error {
	var err error
	kind := "sqlite"
	switch {
	case c.DatabaseURL != "":
		kind = "postgres"
		st.meta, err = postgres.Open(ctx, c.DatabaseURL)
	default:
		st.meta, err = sqlite.Open(ctx, filepath.Join(c.DataDir, "coffer.db"))
	}
	if err != nil {
		return fmt.Errorf("metadata store: %w", err)
	}
	st.base = st.meta
	m, err := st.capabilities(kind)
	if err != nil {
		return err
	}
	if err := m.Migrate(ctx); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	return nil
}

// capabilities finds the optional capabilities of st.meta that the server needs
// (webhook outbox, rejection record, migrations), returning an error naming the
// first one the store of this kind lacks.
func (st *stores) capabilities(kind string) (migrator, error) {
	var ok bool
	if st.outbox, ok = st.meta.(meta.Outbox); !ok {
		return nil, fmt.Errorf("metadata store %s does not support webhooks (meta.Outbox)", kind)
	}
	if st.rejections, ok = st.meta.(meta.Rejections); !ok {
		return nil, fmt.Errorf("metadata store %s does not record virus-scan rejections (meta.Rejections)", kind)
	}
	m, ok := st.meta.(migrator)
	if !ok {
		return nil, fmt.Errorf("metadata store %s cannot apply migrations (Migrate)", kind)
	}
	return m, nil
}

// cacheMeta puts the call counter and the metadata cache over the opened database.
func (st *stores) cacheMeta(c *Config) error {
	var err error
	mcfg := cache.DefaultMetaConfig()
	mcfg.Files, mcfg.TTL = c.MetaCacheFiles, c.MetaCacheTTL
	st.db = meta.NewCounting(st.meta)
	if st.cache, err = cache.NewMeta(st.db, mcfg); err != nil {
		return err
	}
	st.meta = st.cache
	return nil
}

// cacheBlobs builds the hot-content and transformed-variant caches over the blob
// store.
func (st *stores) cacheBlobs(c *Config, log *slog.Logger) error {
	var err error
	def := st.blobs.ForTenant(coffer.DefaultTenantID) // as the default tenant's service (build)
	st.content, err = cache.NewContent(def, cache.ContentConfig{MaxBytes: c.ContentCacheSize, MaxFile: c.ContentCacheMax})
	if err != nil {
		return err
	}
	vcfg := cache.DefaultVariantConfig()
	vcfg.MaxBytes, vcfg.MaxPerFile = c.VariantCacheSize, c.VariantsPerFile
	st.variants, err = cache.NewVariants(def, vcfg, log)
	return err
}

// openBlobs opens the blob store: S3 with an endpoint, else the data dir's disk.
func (st *stores) openBlobs(ctx context.Context, c *Config) error {
	var d blob.Driver
	var err error
	switch {
	case c.S3Endpoint != "":
		cfg := s3blob.DefaultConfig()
		cfg.Endpoint, cfg.Bucket, cfg.Region = c.S3Endpoint, c.S3Bucket, c.S3Region
		cfg.AccessKey, cfg.SecretKey, cfg.PathStyle = c.S3AccessKey, c.S3SecretKey, c.S3PathStyle
		d, err = s3blob.New(ctx, cfg)
	default:
		d, err = fsblob.New(filepath.Join(c.DataDir, "blobs"))
	}
	if err != nil {
		return fmt.Errorf("blob store: %w", err)
	}
	st.blobs = blob.New(d)
	return nil
}

// lockDataDir takes an exclusive lock so two servers never share one data dir (the
// embedded default is single-node; several nodes need PostgreSQL and S3).
func lockDataDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "coffer.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("data dir %s is in use by another coffer process", dir)
	}
	return f, nil
}
