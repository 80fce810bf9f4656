package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ServerStats are a server's resource figures over one scenario run.
type ServerStats struct {
	Source       string  `json:"source"`              // "proc" (/proc/PID) or "metrics" (GET /metrics)
	PID          int     `json:"pid,omitempty"`       // proc only
	PeakRSSBytes int64   `json:"peak_rss_bytes"`      // highest resident set size sampled during the run (proc: summed over the process and its descendants)
	HWMBytes     int64   `json:"hwm_bytes,omitempty"` // proc: VmHWM at the end, the process's (alone) lifetime peak
	CPUSeconds   float64 `json:"cpu_seconds"`         // user+system CPU time used during the run (proc: with the descendants')
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat times: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// procSample samples pid and its descendants (nginx's workers, coffer's image
// worker): RSS and CPU seconds summed over them, VmHWM of pid alone. A descendant
// that exits between the listing and the reading is left out.
func procSample(pid int) (rss, hwm int64, cpu float64, err error) {
	rss, hwm, cpu, err = procOne(pid)
	if err != nil {
		return 0, 0, 0, err
	}
	for _, c := range procTree(pid)[1:] {
		if r, _, u, err := procOne(c); err == nil {
			rss, cpu = rss+r, cpu+u
		}
	}
	return rss, hwm, cpu, nil
}

// maxTree bounds the processes procTree lists.
const maxTree = 512

// procTree returns pid and its descendants, from /proc/PID/task/TID/children (a
// child is listed under the thread that forked it).
func procTree(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < maxTree; i++ {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", out[i]))
		for _, t := range tasks {
			b, _ := os.ReadFile(t)
			for _, f := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(f); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// procOne reads VmRSS and VmHWM (bytes) from /proc/PID/status and utime+stime
// (seconds) from /proc/PID/stat.
func procOne(pid int) (rss, hwm int64, cpu float64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, val, _ := strings.Cut(sc.Text(), ":")
		if key == "VmRSS" || key == "VmHWM" {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
			if key == "VmRSS" {
				rss = kb << 10
			} else {
				hwm = kb << 10
			}
		}
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	cpu, err = parseStatCPU(string(stat))
	return rss, hwm, cpu, err
}

// parseStatCPU returns utime+stime in seconds from the text of /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so fields count from the
// last ')'.
func parseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the name, want at least 13", len(f))
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseUint(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q, stime %q are not numbers", f[11], f[12])
	}
	return float64(ut+st) / clockTicks, nil
}

// sampler watches a server's resources while a scenario runs.
type sampler struct {
	pid    int
	api    *apiClient // nil: no /metrics
	cancel context.CancelFunc
	done   chan struct{}

	mu            sync.Mutex
	proc, metrics *ServerStats
	cpu0, mcpu0   float64
}

// startSampler samples every period until stop; pid 0 and api nil turn a source off.
// A source that fails at the start (no such process, no /metrics) is left out.
func startSampler(ctx context.Context, pid int, api *apiClient, period time.Duration) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{pid: pid, api: api, cancel: cancel, done: make(chan struct{})}
	if pid > 0 {
		if rss, _, cpu, err := procSample(pid); err == nil {
			s.proc, s.cpu0 = &ServerStats{Source: "proc", PID: pid, PeakRSSBytes: rss}, cpu
		}
	}
	if api != nil {
		if m, ok := api.scrapeMetrics(ctx); ok {
			s.metrics, s.mcpu0 = &ServerStats{Source: "metrics", PeakRSSBytes: int64(m.RSSBytes)}, m.CPUSeconds
		}
	}
	go s.loop(ctx, period)
	return s
}

func (s *sampler) loop(ctx context.Context, period time.Duration) {
	defer close(s.done)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// sample updates the peaks and CPU deltas from both sources.
func (s *sampler) sample(ctx context.Context) {
	if s.proc != nil {
		if rss, hwm, cpu, err := procSample(s.pid); err == nil {
			s.mu.Lock()
			s.proc.PeakRSSBytes = max(s.proc.PeakRSSBytes, rss)
			s.proc.HWMBytes, s.proc.CPUSeconds = hwm, cpu-s.cpu0
			s.mu.Unlock()
		}
	}
	if s.metrics != nil {
		if m, ok := s.api.scrapeMetrics(ctx); ok {
			s.mu.Lock()
			s.metrics.PeakRSSBytes = max(s.metrics.PeakRSSBytes, int64(m.RSSBytes))
			s.metrics.CPUSeconds = m.CPUSeconds - s.mcpu0
			s.mu.Unlock()
		}
	}
}

// stop takes a last sample, ends the goroutine and returns the figures (nil for a
// source that was off or unavailable).
func (s *sampler) stop(ctx context.Context) (proc, metrics *ServerStats) {
	s.cancel()
	<-s.done
	s.sample(ctx)
	return s.proc, s.metrics
}
