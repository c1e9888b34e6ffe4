package daemon

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

const twoJobs = oneJob + `  - name: tick
    schedule: "@every 1h"
    command: ["true"]
    timeout: 1m
`

func jobNames(t *testing.T, d *Daemon) string {
	t.Helper()
	jobs, err := d.Service().Jobs(context.Background())
	if err != nil {
		t.Fatalf("Jobs: %v", err)
	}
	var names []string
	for _, j := range jobs {
		names = append(names, j.Name)
	}
	return strings.Join(names, ",")
}

func TestReload(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantErr   string // "" for a reload that applies
		wantJobs  string
		wantState bool // the state dir stays the one the daemon started with
	}{
		{name: "a new job", body: twoJobs, wantJobs: "nap,tick"},
		{name: "invalid file keeps the old jobs", body: "jobs:\n  - name: nap\n    schedule: \"every tuesday\"\n    command: [\"true\"]\n",
			wantErr: "old jobs kept", wantJobs: "nap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, oneJob)
			d := h.start()
			h.run(d, nil)
			h.write(tt.body)
			err := d.Reload(context.Background())
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Reload: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Reload: %v, want an error saying %q", err, tt.wantErr)
			}
			if got := jobNames(t, d); got != tt.wantJobs {
				t.Errorf("jobs after reload: %s, want %s", got, tt.wantJobs)
			}
			refused := h.tr.logged("reload refused; keeping the running jobs")
			if (tt.wantErr != "") != (len(refused) > 0) {
				t.Errorf("refusal records: %v", refused)
			}
		})
	}
}

func TestReloadKeepsStateDir(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	h.run(d, nil)
	before := d.current.Load().StateDir
	if err := os.WriteFile(h.path, []byte("state_dir: "+h.dir+"/elsewhere\n"+twoJobs), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := d.current.Load().StateDir; got != before {
		t.Errorf("state dir after reload: %s, want %s kept until a restart", got, before)
	}
	// The watcher may reload the same file again: one warning or more.
	if got := h.tr.logged("state_dir and lock_backend changes take effect at restart, not on reload"); len(got) == 0 {
		t.Error("no warning that the state dir change waits for a restart")
	}
}

// TestReloadKeepsDurability (issue 29): the store, the spool and the
// locker are opened with the durability the daemon started with; a reload
// that changes it warns and keeps it until a restart.
func TestReloadKeepsDurability(t *testing.T) {
	h := newHarness(t, "durability: process\n"+oneJob)
	d := h.start()
	h.run(d, nil)
	if got := d.env.Store.Durability(); got != run.DurabilityProcess {
		t.Fatalf("store opened with durability %s, want process", got)
	}
	h.write(twoJobs) // durability: machine, the default
	if err := d.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := d.current.Load().Durability; got != run.DurabilityProcess {
		t.Errorf("durability after reload: %s, want process kept until a restart", got)
	}
	if got := jobNames(t, d); got != "nap,tick" {
		t.Errorf("jobs after reload: %s, want the rest of the file applied", got)
	}
	if got := h.tr.logged("durability changes take effect at restart, not on reload"); len(got) == 0 {
		t.Error("no warning that the durability change waits for a restart")
	}
}

func TestRunSIGHUP(t *testing.T) {
	t.Run("daemon: reload", func(t *testing.T) {
		h := newHarness(t, oneJob)
		d := h.start()
		sigs := make(chan os.Signal, 1)
		ended := h.run(d, sigs)
		h.write(twoJobs)
		sigs <- syscall.SIGHUP
		// A Reload is answered after the SIGHUP's, by the same loop.
		if err := d.Reload(context.Background()); err != nil {
			t.Fatalf("Reload: %v", err)
		}
		if got := jobNames(t, d); got != "nap,tick" {
			t.Errorf("jobs after SIGHUP: %s", got)
		}
		select {
		case sig := <-ended:
			t.Fatalf("Run returned %v on SIGHUP", sig)
		default:
		}
	})
	t.Run("embedded console: quit", func(t *testing.T) {
		h := newHarness(t, oneJob)
		h.opts.HangUpQuits = true
		d := h.start()
		sigs := make(chan os.Signal, 1)
		ended := h.run(d, sigs)
		sigs <- syscall.SIGHUP
		if sig := <-ended; sig != syscall.SIGHUP {
			t.Errorf("Run returned %v, want SIGHUP", sig)
		}
	})
	t.Run("SIGTERM ends Run", func(t *testing.T) {
		h := newHarness(t, oneJob)
		d := h.start()
		sigs := make(chan os.Signal, 1)
		ended := h.run(d, sigs)
		sigs <- syscall.SIGTERM
		if sig := <-ended; sig != syscall.SIGTERM {
			t.Errorf("Run returned %v, want SIGTERM", sig)
		}
		if got := h.tr.logged("stopping: no new fires; waiting for running jobs"); len(got) != 1 {
			t.Errorf("records: %v, want one saying the drain began", got)
		}
	})
}

func TestWatchReloads(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	reloaded := make(chan run.Reload, 4)
	d.env.Listen(func(ev run.Event) {
		if r, ok := ev.(run.Reload); ok {
			reloaded <- r
		}
	})
	h.run(d, nil)
	h.write(twoJobs)
	select {
	case r := <-reloaded:
		if r.Jobs != 2 || len(r.Problems) > 0 {
			t.Errorf("reload on change: %+v, want 2 jobs and no problem", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no reload within 10 s of jobs.yaml changing")
	}
}

func TestReloadAfterShutdown(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	d.Shutdown(nil)
	if err := d.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Reload after Shutdown: %v, want shutting down", err)
	}
}

// TestReloadRefusedLogsNoSuccess: a refused reload logs its problems and
// no "config reloaded"; the good one after it logs that once.
func TestReloadRefusedLogsNoSuccess(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	h.run(d, nil)
	h.write("jobs:\n  - name: nap\n    schedule: \"every tuesday\"\n    command: [\"true\"]\n")
	if err := d.Reload(context.Background()); err == nil {
		t.Fatal("Reload of an invalid file: nil error")
	}
	if got := h.tr.logged("reload refused; keeping the running jobs"); len(got) != 2 {
		t.Errorf("refusal records: %v, want one per problem (two)", got)
	}
	if got := h.tr.logged("config reloaded"); len(got) != 0 {
		t.Errorf("a refused reload logged %v", got)
	}
	h.write(twoJobs)
	if err := d.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if got := h.tr.logged("config reloaded"); len(got) != 1 || got[0]["jobs"] != "2" {
		t.Errorf("good reload records: %v, want one with jobs=2", got)
	}
}

// TestDaemonHoldsNoKeyPositions: what the daemon runs with, at start and
// after a reload, holds no job's key positions (shed): it never reads
// them, and with thousands of jobs they are megabytes.
func TestDaemonHoldsNoKeyPositions(t *testing.T) {
	h := newHarness(t, oneJob)
	d := h.start()
	h.run(d, nil)
	if src := d.current.Load().Source.Jobs; src != nil {
		t.Errorf("at start: %d jobs' positions held", len(src))
	}
	h.write(twoJobs)
	if err := d.Reload(context.Background()); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	if src := d.current.Load().Source.Jobs; src != nil {
		t.Errorf("after a reload: %d jobs' positions held", len(src))
	}
}
