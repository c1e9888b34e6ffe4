package locktest

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
)

// TestRequest: a slot makes a scheduled fire, which checks it; none, a
// manual run, which does not.
func TestRequest(t *testing.T) {
	for _, tt := range []struct {
		name  string
		slot  time.Time
		check bool
	}{
		{"scheduled", SlotAt(5), true},
		{"manual", time.Time{}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := Request("sync", "run-1", "host-a", tt.slot)
			if req.Name != "orders" || req.Record.Job != "sync" || req.Record.RunID != "run-1" || req.Record.Host != "host-a" ||
				!req.Record.Slot.Equal(tt.slot) || req.CheckSlot != tt.check {
				t.Errorf("Request = %+v, want lock orders for sync/run-1 on host-a, slot %v, CheckSlot %v", req, tt.slot, tt.check)
			}
		})
	}
	if got, want := SlotAt(7), time.Date(2025, 3, 30, 1, 7, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("SlotAt(7) = %v, want %v", got, want)
	}
}

// TestInRunAndKillAndReap: a process started with a run's tag is that
// run's and no other's; KillAndReap leaves no such process behind.
func TestInRunAndKillAndReap(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.Env = append(os.Environ(), run.Tag("run-7"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	reaped := false
	t.Cleanup(func() {
		if !reaped { // a reaped pid may be another process's by now
			KillAndReap(pid)
		}
	})
	ctx := Context(t, 10*time.Second)
	// The tag is in /proc/PID/environ once sleep has exec'd.
	WaitUntil(ctx, t, "the child carries its tag", func() bool { return InRun(pid, "run-7") })
	if InRun(pid, "run-8") || InRun(os.Getpid(), "run-7") {
		t.Error("InRun says a process of another run, or this one, is run-7's")
	}
	KillAndReap(pid)
	reaped = true
	if err := unix.Kill(pid, 0); !errors.Is(err, unix.ESRCH) {
		t.Errorf("after KillAndReap, kill(pid, 0) = %v, want ESRCH", err)
	}
}

// TestReadLine: a line is read trimmed; a reader that never writes is
// given up on when the context ends.
func TestReadLine(t *testing.T) {
	got, err := ReadLine(t.Context(), strings.NewReader("  4242 \nrest\n"))
	if got != "4242" || err != nil {
		t.Errorf("ReadLine = %q, %v; want 4242", got, err)
	}
	r, w := io.Pipe()
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := ReadLine(ctx, r); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ReadLine of a silent reader = %v, want the context's deadline", err)
	}
}
