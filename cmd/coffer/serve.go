package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/coffer/coffer/app"
	"github.com/coffer/coffer/internal/gcfloor"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newServeCmd() *cobra.Command {
	c := &serveConfig{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the storage server",
		Long: "Run the storage server: the /v1 API (hasura-storage's), the management API (gRPC, gRPC-Web,\n" +
			"Connect) and the web console (/console/) on one port. By default: SQLite and local disk\n" +
			"under ./data, on 127.0.0.1:8000. The manual: docs/configuration.md and docs/flags.md.",
		Example: "  coffer serve --admin-secret change-me\n" +
			"  coffer serve --database-url postgres://coffer@127.0.0.1/coffer \\\n" +
			"    --s3-endpoint http://127.0.0.1:9000 --s3-bucket coffer --public-url https://files.example.com\n" +
			"  COFFER_ADMIN_SECRET=change-me coffer serve --tenants --platform-secret P --tenant-key K",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.load(cmd.Flags()); err != nil {
				return err
			}
			log, err := newLogger(c.LogLevel, c.LogFormat)
			if err != nil {
				return err
			}
			if c.GCHeapFloor < 0 {
				return fmt.Errorf("--gc-heap-floor must be 0 or more")
			}
			defer gcfloor.Start(uint64(c.GCHeapFloor)).Stop()
			c.Version = version
			m, err := app.New(cmd.Context(), c.Config, app.Parts{}, log)
			if err != nil {
				return err
			}
			defer m.Close()
			if err := m.Listen(); err != nil {
				return err
			}
			return m.Run(cmd.Context())
		},
	}
	c.storeFlags(cmd.Flags())
	c.serveFlags(cmd.Flags())
	bindEnv(cmd.Flags())
	groupedUsage(cmd)
	return cmd
}

func newMigrateCmd() *cobra.Command {
	c := &serveConfig{Config: app.DefaultConfig()} // settings without a flag here keep serve's defaults
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply database migrations and exit (serve also migrates at start)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := c.load(cmd.Flags()); err != nil {
				return err
			}
			if err := app.Migrate(cmd.Context(), c.Config); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "migrations applied")
			return nil
		},
	}
	c.storeFlags(cmd.Flags())
	bindEnv(cmd.Flags())
	groupedUsage(cmd)
	return cmd
}

// load reads the environment variables of the flags not on the command line into c
// and validates it.
func (c *serveConfig) load(fs *pflag.FlagSet) error {
	if err := applyEnv(fs); err != nil {
		return err
	}
	return c.Validate()
}

func newLogger(level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(os.Stderr, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(os.Stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be json or text")
}
