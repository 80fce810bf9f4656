// Command coffer is the coffer storage server.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "coffer:", err)
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "coffer",
		Short:         "coffer: a fast self-hosted file storage and delivery service",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCmd(), newMigrateCmd(), newVersionCmd())
	root.AddCommand(newBenchCmd())
	root.AddCommand(newAdminCmd())
	return root
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "coffer", version)
		},
	}
}

// bindEnv gives every flag of fs an environment variable COFFER_<FLAG_NAME>, used when
// the flag is not on the command line, and names it in --help.
func bindEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		env := envName(f.Name)
		f.Usage += " (env " + env + ")"
	})
}

func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Changed || err != nil {
			return
		}
		if v, ok := os.LookupEnv(envName(f.Name)); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), e)
			}
		}
	})
	return err
}

func envName(flag string) string {
	return "COFFER_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}
