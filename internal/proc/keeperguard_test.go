package proc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"cronvisor/internal/base/statedir"
	"cronvisor/internal/harness/testlog"
)

// TestGuardFileLivesWhileTheRunDoes: a run with a keeper and an End has
// a guard file while it runs, 0600, named by its supervisor, that says
// what its keeper was told (deadline, timeout, grace, tag, job and slot,
// the lease hand-off); once its supervisor saw it end, the slot is free.
func TestGuardFileLivesWhileTheRunDoes(t *testing.T) {
	t.Parallel()
	dir := statedir.Dir(t.TempDir())
	runID := "guardfile-" + strconv.Itoa(os.Getpid())
	started := filepath.Join(t.TempDir(), "started")
	deadline := time.Now().Add(time.Minute).Round(0)
	slot := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	spec := Spec{
		Argv:      []string{"/bin/sh", "-c", "touch " + started + "; while [ -e " + started + " ]; do sleep 0.02; done"},
		Tag:       "CRONVISOR_RUN_ID=" + runID,
		KillGrace: 3 * time.Second,
		Keepers:   NewKeepers(),
		Keeper: &Keeper{End: dir.RunEnd(runID), Deadline: deadline, Timeout: time.Minute,
			Handoff: []byte(`{"kind":"test"}`), Within: 2 * time.Second,
			Run: KeptRun{Job: "j", Slot: slot, Attempt: 2, Manual: true}},
	}
	t.Cleanup(spec.Keepers.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, spec) }()
	if !testlog.Poll(10*time.Second, func() bool { _, err := os.Stat(started); return err == nil }) {
		t.Fatal("the run did not start")
	}
	guard := onlyGuard(t, dir)
	heldGuards(t, guard)
	fi, err := os.Stat(guard)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := statedir.GuardSlot(filepath.Base(guard))
	if pid, _, ok := GuardOwner(name); !ok || pid != os.Getpid() {
		t.Errorf("slot %q names pid %d (%v), want this supervisor's %d", name, pid, ok, os.Getpid())
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("guard file mode %v, want 0600: it may hold a lease's password", fi.Mode().Perm())
	}
	g, err := ReadGuard(guard)
	if err != nil {
		t.Fatal(err)
	}
	want := Orphaned{RunID: runID, Run: KeptRun{Job: "j", Slot: slot, Attempt: 2, Manual: true, SupervisorPID: os.Getpid()},
		Written: g.Written, Tag: spec.Tag, Deadline: deadline, Timeout: time.Minute, Grace: 3 * time.Second,
		Within: 2 * time.Second, Lease: []byte(`{"kind":"test"}`)}
	if g.Cgroup != "" { // a leaf where this machine has cgroup v2 and the spec asks: not here
		t.Errorf("cgroup %q, want none", g.Cgroup)
	}
	if !g.Deadline.Equal(deadline) || !g.Run.Slot.Equal(slot) {
		t.Errorf("deadline %v slot %v, want %v %v", g.Deadline, g.Run.Slot, deadline, slot)
	}
	g.Deadline, g.Run.Slot, want.Deadline, want.Run.Slot = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if g.RunID != want.RunID || g.Run != want.Run || g.Tag != want.Tag || g.Timeout != want.Timeout ||
		g.Grace != want.Grace || g.Within != want.Within || string(g.Lease) != string(want.Lease) || g.AtOnce || g.Session || g.Lock {
		t.Errorf("ReadGuard = %+v\nwant %+v", g, want)
	}
	if time.Since(g.Written) > time.Minute || g.Written.After(time.Now()) {
		t.Errorf("written %v, want just before the run's start", g.Written)
	}
	os.Remove(started)
	if res := <-done; res.Outcome != Exited {
		t.Fatalf("run: %+v", res)
	}
	if _, err := ReadGuard(guard); !errors.Is(err, ErrGuardFree) {
		t.Errorf("guard slot after the run's end: %v, want free: the next supervisor would guard a run that is over", err)
	}
	heldGuards(t, guard)
}

// heldGuards fails t if this process holds guard open: every descriptor
// it holds is copied into each run's fork, so a slot is opened only to be
// written.
func heldGuards(t *testing.T, guard string) {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == guard {
			t.Errorf("fd %s holds the guard slot %s open between its writes", fd.Name(), guard)
		}
	}
}

// onlyGuard is the one guard file in dir's runs/, failing the test
// otherwise.
func onlyGuard(t *testing.T, dir statedir.Dir) string {
	t.Helper()
	matches, err := filepath.Glob(dir.Guard("*"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("guard files %v (%v), want one while the run runs", matches, err)
	}
	return matches[0]
}

// TestReadGuardRefusesWhatIsNoGuard: a torn file or one that is no
// keeper's arguments is an error naming the file.
func TestReadGuardRefusesWhatIsNoGuard(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, body string }{
		{"torn", `{"written":"2026-12-03T17:00:00Z","args":["-tag"`},
		{"not keeper arguments", `{"written":"2026-12-03T17:00:00Z","args":["-bogus","1"]}`},
		{"not JSON", `{written`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".guard")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadGuard(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("ReadGuard: %v, want an error naming %s", err, path)
			}
		})
	}
}
