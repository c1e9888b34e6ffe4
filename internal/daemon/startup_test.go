package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/store/history"
)

// startOrder is what New starts, in order: the lock backend before the
// reaper, history before the writer that writes it, Recovery after both,
// the goroutines that fire, sweep, serve, guard the state dir and
// watch, and last the one that hands start-up's memory back once the
// scheduler has built its heap.
var startOrder = []string{
	"started locker", "started reaper", "started history", "started history writer", "started resources", "started recovery", "started notifications",
	"started skip log", "started outlog", "started scheduler", "started housekeeping", "started socket", "started state dir guard",
	"started watcher", "started memory settling",
}

func TestNewStartsInOrder(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	equalSteps(t, "start-up", h.tr.prefixed("started "), startOrder)
	if got := h.tr.logged("cronvisor started"); len(got) != 1 || got[0]["jobs"] != "1" {
		t.Errorf("start-up record: %v, want one with jobs=1", got)
	}
	jobs, err := d.Service().Jobs(context.Background())
	if err != nil || len(jobs) != 1 || jobs[0].Name != "nap" {
		t.Errorf("Jobs() = %v, %v; want the one job nap", jobs, err)
	}
}

func TestNewRefusals(t *testing.T) {
	t.Run("unsafe state dir: no lock backend opened", func(t *testing.T) {
		h := newHarness(t, oneJob)
		state := filepath.Join(h.dir, "state")
		if err := os.Chmod(state, 0o777); err != nil { // past the umask
			t.Fatal(err)
		}
		opened := false
		locker := h.opts.Locker
		h.opts.Locker = func(cfg *config.Config) (lock.Locker, error) { opened = true; return locker(cfg) }
		if _, err := New(h.load(), h.opts); err == nil {
			t.Fatal("New with a world-writable state dir: no error")
		}
		if opened {
			t.Error("the lock backend was opened before the state dir was checked")
		}
	})
	t.Run("lock backend fails: nothing started", func(t *testing.T) {
		h := newHarness(t, oneJob)
		boom := errors.New("no backend")
		h.opts.Locker = func(*config.Config) (lock.Locker, error) { return nil, boom }
		if _, err := New(h.load(), h.opts); !errors.Is(err, boom) {
			t.Fatalf("New: %v, want %v", err, boom)
		}
		equalSteps(t, "started", h.tr.prefixed("started "), nil)
	})
}

func TestNewDegradedHistory(t *testing.T) {
	h := newHarness(t, oneJob)
	h.opts.OpenStore = func(string, ...history.StoreOption) (*history.Store, error) { return nil, errors.New("disk on fire") }
	d := h.start()
	equalSteps(t, "start-up", h.tr.prefixed("started "), startOrder)
	if got := h.tr.logged("history degraded: cannot open the database; jobs keep running and their records wait in memory"); len(got) != 1 {
		t.Errorf("degraded record: %v, want one", got)
	}
	jobs, err := d.Service().Jobs(context.Background())
	if err != nil || len(jobs) != 1 || !strings.Contains(jobs[0].History, "disk on fire") {
		t.Errorf("Jobs() = %+v, %v; want the job with its history degraded by the open error", jobs, err)
	}
}

// TestNewRefusedBesideAnotherDaemon: a daemon whose state dir's socket
// another serves is refused before it starts firing, and what it opened
// is closed again.
func TestNewRefusedBesideAnotherDaemon(t *testing.T) {
	h := newHarness(t, oneJob)
	h.opts.Listen = func(string) (net.Listener, error) { return nil, ctl.ErrInUse }
	_, err := New(h.load(), h.opts)
	if err == nil || !strings.Contains(err.Error(), "already supervises the state dir") || !strings.Contains(err.Error(), "its own state_dir") {
		t.Fatalf("New: %v, want the refusal saying how to run a second one", err)
	}
	for _, step := range h.tr.prefixed("started ") {
		if step == "started scheduler" || step == "started socket" {
			t.Errorf("refused daemon %s", step)
		}
	}
}
