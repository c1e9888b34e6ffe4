package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/config"
	"cronvisor/internal/ctl"
	"cronvisor/internal/lock"
	"cronvisor/internal/lock/file"
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

// TestNewReplaysCursorJournals: a daemon starting after a machine crash
// finds a lock file older than the dead daemon's cursor journal (the page
// cache lost); it puts the journal's record back before Recovery reads
// it, says so, and removes the journal.
func TestNewReplaysCursorJournals(t *testing.T) {
	h := newHarness(t, oneJob)
	state := statedir.Dir(filepath.Join(h.dir, "state"))
	dead := file.NewLocker(state.Locks(), nil, file.WithCursorJournal(state.Cursors()))
	g, err := dead.Acquire(context.Background(), lock.Request{Name: "nap", CheckSlot: true,
		Record: lock.Record{Holder: run.Holder{Job: "nap", RunID: "run-lost"}, Slot: time.Unix(1e9, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Lease.SetPID(1 << 22); err != nil { // no such process
		t.Fatal(err)
	}
	if err := g.Lease.ReleaseInFlight(); err != nil { // waits for the journal's sync
		t.Fatal(err)
	}
	if err := dead.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(state.LockFile("nap"), 0); err != nil { // the crash
		t.Fatal(err)
	}
	h.start()
	if got := h.tr.logged("locks: lock records put back from a dead process's cursor journal (the machine crashed)"); len(got) != 1 || got[0]["locks"] != "1" {
		t.Errorf("replay record: %v, want one with locks=1", got)
	}
	data, err := os.ReadFile(state.LockFile("nap"))
	if err != nil || !strings.Contains(string(data), `"run_id":"run-lost"`) {
		t.Errorf("lock file after start-up: %q, %v; want the journal's record of run-lost", data, err)
	}
	if left, _ := filepath.Glob(filepath.Join(state.Cursors(), "*.journal")); len(left) != 0 {
		t.Errorf("journals after start-up: %v; want the dead one removed", left)
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
