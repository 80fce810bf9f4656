package app

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/coffer/coffer/imaging"
	"github.com/coffer/coffer/imaging/remote"
)

// imagerName is the image worker's binary, built from cmd/coffer-imager.
const imagerName = "coffer-imager"

// newImages returns the image engine: the coffer-imager worker (a child process
// started with the first transformation) if it is found and starts, else an engine
// that answers 501, logging once why transformations are off. The server itself
// never links libvips. Only invalid limits are an error.
func newImages(c *Config, log *slog.Logger) (imaging.Engine, error) {
	icfg := imaging.DefaultConfig()
	icfg.Workers, icfg.Queue, icfg.MaxSourcePixels, icfg.MaxSourceBytes = c.ImageWorkers, c.ImageQueue, c.ImageMaxPixels, c.ImageMaxBytes
	icfg.MaxCost, icfg.Timeout, icfg.UserWorkers, icfg.UserQueue = c.ImageMaxCost, c.ImageTimeout, c.ImageUserWorkers, c.ImageUserQueue
	if err := icfg.Validate(); err != nil {
		return nil, fmt.Errorf("image settings: %w", err)
	}
	if c.ImageWorkerIdle < 0 {
		return nil, fmt.Errorf("--image-worker-idle must not be negative")
	}
	if c.ImageWorkersRemote != "" {
		return newRemoteImages(c, icfg, log)
	}
	path, err := findImager(c.ImageWorker)
	if err == nil {
		rcfg := remote.DefaultConfig(path)
		rcfg.Imaging, rcfg.Log, rcfg.IdleTimeout = icfg, log, c.ImageWorkerIdle
		var e *remote.Engine
		if e, err = remote.New(rcfg); err == nil {
			log.Info("image transformations on", "worker", path, "workers", icfg.Workers, "formats", formats(e))
			return e, nil
		}
	}
	log.Warn("image transformations are off: transform requests answer 501", "reason", err.Error())
	return imaging.NewDisabled("the image worker " + imagerName + " is not available"), nil
}

// findImager returns the worker binary: the --image-worker path if given, else
// coffer-imager next to this executable, else on $PATH.
func findImager(flag string) (string, error) {
	if flag != "" {
		if _, err := os.Stat(flag); err != nil {
			return "", fmt.Errorf("--image-worker: %w", err)
		}
		return flag, nil
	}
	var dir string
	if exe, err := os.Executable(); err == nil {
		dir = filepath.Dir(exe)
		if p := filepath.Join(dir, imagerName); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(imagerName); err == nil {
		return p, nil
	}
	return "", errors.New("no " + imagerName + " next to the coffer binary (" + dir + ") nor on $PATH; build it with libvips installed: go build ./cmd/coffer-imager")
}

// isExecutable reports whether p is a regular file with an execute bit.
func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// formats lists the output formats the worker writes, for the start-up log.
func formats(e imaging.Engine) string {
	var out []string
	for _, f := range []imaging.Format{imaging.JPEG, imaging.PNG, imaging.WebP, imaging.AVIF} {
		if e.Supports(f) {
			out = append(out, string(f))
		}
	}
	return strings.Join(out, ",")
}

// workerStarts returns the worker start counter of e, nil if e has no child worker.
func workerStarts(e imaging.Engine) func() int64 {
	if r, ok := e.(*remote.Engine); ok {
		return r.Starts
	}
	return nil
}

// imagesOn reports whether e transforms (it is not the 501 engine).
func imagesOn(e imaging.Engine) bool {
	_, off := e.(*imaging.Disabled)
	return !off
}
