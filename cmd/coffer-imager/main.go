// Command coffer-imager is coffer's image worker: `coffer serve` starts it with the
// first image transformation and talks to it over its stdin and stdout (frames of
// imaging/remote/imagerpc). It runs the libvips engine of imaging/vips, so the
// server itself never links libvips: the ~100 shared libraries libvips pulls in, and
// any crash in a C image decoder, stay in this process. Logs go to stderr as JSON.
//
// As a child, it is not meant to be run by hand; its flags are the limits of
// imaging.Config, which the server passes from its own --image-* flags.
//
// With --listen ADDR it is a network service instead (imaging/remote.ServeListener):
// servers started with --image-workers-remote connect to it, prove the shared
// secret (--secret or COFFER_IMAGER_SECRET) and/or a TLS client certificate, and
// send transformations over the same frames. Its limits are then its own flags; it
// stops on SIGINT or SIGTERM. Connections that have not authenticated yet have their
// own small budget (--max-handshakes) and deadline (--handshake-timeout) outside
// --max-conns, so silent peers cannot keep servers out.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
	"github.com/coffer/coffer/imaging/vips"
	"golang.org/x/sys/unix"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("process", "coffer-imager", "pid", os.Getpid())
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "coffer-imager:", err)
		os.Exit(2)
	}
	if cfg.net.listen == "" {
		// Ctrl-C in a terminal and systemd's stop reach the whole process group; the
		// server drains its requests first and then closes our stdin, which ends us.
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	}
	if err := run(cfg, log); err != nil {
		log.Error("coffer-imager stopped", "err", err)
		os.Exit(1)
	}
}

// config is what the flags say: the limits, and how to listen if at all.
type config struct {
	imaging imaging.Config
	net     netFlags
}

// parseFlags reads the limits the server passes, and the network flags.
func parseFlags(args []string) (config, error) {
	cfg := imaging.DefaultConfig()
	fs := flag.NewFlagSet("coffer-imager", flag.ContinueOnError)
	fs.IntVar(&cfg.Workers, "workers", cfg.Workers, "transformations running at once")
	fs.Int64Var(&cfg.MaxSourceBytes, "max-bytes", cfg.MaxSourceBytes, "largest source file (bytes)")
	fs.Int64Var(&cfg.MaxSourcePixels, "max-pixels", cfg.MaxSourcePixels, "largest source width x height")
	fs.Int64Var(&cfg.MaxOutputPixels, "max-output-pixels", cfg.MaxOutputPixels, "largest output width x height")
	fs.IntVar(&cfg.MaxFrames, "max-frames", cfg.MaxFrames, "most frames a source may have")
	fs.Int64Var(&cfg.MaxCost, "max-cost", cfg.MaxCost, "cost budget of one transformation (imaging.Cost)")
	fs.DurationVar(&cfg.Timeout, "timeout", cfg.Timeout, "wall-clock limit of one transformation; beyond it its computation is killed")
	nf := addNetFlags(fs)
	if err := fs.Parse(args); err != nil {
		return config{imaging: cfg}, err
	}
	if fs.NArg() > 0 {
		return config{imaging: cfg}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	// The server's pool bounds the transforms it sends; requests it has given up on
	// may still run here, so the queue only has to be long enough never to refuse.
	// The per-user caps are the server's: here every request comes from it.
	cfg.Queue, cfg.UserWorkers, cfg.UserQueue = 1024, cfg.Workers, 0
	if err := cfg.Validate(); err != nil {
		return config{imaging: cfg}, err
	}
	return config{imaging: cfg, net: *nf}, nf.validate()
}

// run starts libvips (refusing to say Hello if it cannot write JPEG, i.e. did not
// start) and serves the server until it closes stdin, or with --listen, servers
// on the network until a signal.
func run(cfg config, log *slog.Logger) error {
	e, err := vips.New(cfg.imaging)
	if err != nil {
		return err
	}
	defer e.Close()
	if !e.Supports(imaging.JPEG) {
		return fmt.Errorf("libvips did not start (built with -tags novips, or the library is broken)")
	}
	out, err := privateStdout()
	if err != nil {
		return err
	}
	if cfg.net.listen != "" {
		return listen(cfg, e, log)
	}
	return remote.Serve(os.Stdin, out, e, cfg.imaging.MaxSourceBytes, log)
}

// privateStdout moves the protocol off file descriptor 1: it returns a new
// descriptor for the pipe to the server and points 1 at stderr, so anything a C
// library prints to stdout lands in the logs instead of corrupting the frames.
func privateStdout() (*os.File, error) {
	fd, err := unix.Dup(1)
	if err != nil {
		return nil, fmt.Errorf("dup stdout: %w", err)
	}
	unix.CloseOnExec(fd)
	if err := unix.Dup3(2, 1, 0); err != nil {
		return nil, fmt.Errorf("stdout to stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "server"), nil
}
