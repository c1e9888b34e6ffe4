package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// tracedSh is a command for startTraced: sh running script, its output
// in out.
func tracedSh(script string, out *strings.Builder) *exec.Cmd {
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// TestTracedStartAppliesBeforeTheFirstInstruction: what apply sets is in
// force from the job's first instruction (sh reads it back before doing
// anything else), and the job runs untraced.
func TestTracedStartAppliesBeforeTheFirstInstruction(t *testing.T) {
	if !traceUsable() {
		t.Fatal("runs cannot be started traced here (root with CAP_SYS_PTRACE is expected)")
	}
	var out strings.Builder
	cmd := tracedSh("cat /proc/self/oom_score_adj; ulimit -n; grep TracerPid /proc/self/status", &out)
	var applied int
	err := startTraced(cmd, func() error { return startRegistered(cmd) }, func(pid int) error {
		applied = pid
		return applyToProcess(&Setup{OOMScoreAdj: intp(700), Rlimits: []Rlimit{{unix.RLIMIT_NOFILE, 321}}}, pid)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer unregister(cmd.Process.Pid)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("job: %v, output %q", err, out.String())
	}
	if applied != cmd.Process.Pid {
		t.Errorf("applied to pid %d, the job is %d", applied, cmd.Process.Pid)
	}
	if got, want := strings.Fields(out.String()), []string{"700", "321", "TracerPid:", "0"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("job saw %q, want %q", got, want)
	}
}

// TestTracedStartRefusedRunsNothing: a setting that cannot be applied
// ends the process before its first instruction, reaped, and the error
// is the start's.
func TestTracedStartRefusedRunsNothing(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	var out strings.Builder
	cmd := tracedSh("touch "+marker, &out)
	refused := errors.New("refused")
	err := startTraced(cmd, func() error { return startRegistered(cmd) }, func(int) error { return refused })
	if !errors.Is(err, refused) {
		t.Fatalf("startTraced = %v, want the apply's error", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the job ran (%v)", err)
	}
	if cmd.ProcessState == nil {
		t.Fatal("the process was not reaped")
	}
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Errorf("process ended %v, want killed by SIGKILL", cmd.ProcessState)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(cmd.Process.Pid)); err == nil {
		t.Errorf("process %d still exists", cmd.Process.Pid)
	}
}

// TestTracedStartPassesASignalOn: a signal that reaches the process
// around its exec's stop is its own: it ends the job (SIGHUP's default)
// before its first instruction, and the start is not an error.
func TestTracedStartPassesASignalOn(t *testing.T) {
	for i := range 20 { // the signal lands before the exec's stop or after it
		marker := filepath.Join(t.TempDir(), "ran")
		var out strings.Builder
		cmd := tracedSh("touch "+marker, &out)
		err := startTraced(cmd, func() error {
			err := startRegistered(cmd)
			if err == nil {
				_ = unix.Kill(cmd.Process.Pid, unix.SIGHUP)
			}
			return err
		}, func(pid int) error { return nil })
		if err != nil {
			t.Fatalf("#%d: startTraced = %v, want nil", i, err)
		}
		_ = cmd.Wait()
		unregister(cmd.Process.Pid)
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGHUP {
			t.Errorf("#%d: process ended %v, want by SIGHUP", i, cmd.ProcessState)
		}
		if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("#%d: the job ran (%v)", i, err)
		}
	}
}

// TestSetupTracedOnlyBeyondTheThread: a Setup the forking thread passes
// on (nice, ionice) needs no trace; one with more does, where tracing
// works.
func TestSetupTracedOnlyBeyondTheThread(t *testing.T) {
	for _, c := range []struct {
		s    *Setup
		want bool
	}{
		{nil, false},
		{&Setup{Nice: intp(5)}, false},
		{&Setup{Nice: intp(5), OOMScoreAdj: intp(100)}, true},
		{&Setup{Rlimits: []Rlimit{{unix.RLIMIT_CORE, 0}}}, true},
	} {
		if got := c.s.traced(); got != c.want {
			t.Errorf("%+v traced = %v, want %v", c.s, got, c.want)
		}
	}
}

// TestStoppedAtExecPassesOtherStopsOn: a traced process stopped by a
// signal other than the exec's SIGTRAP gets that signal (here, its trap
// runs) rather than losing it, and its end is left for the caller's Wait.
func TestStoppedAtExecPassesOtherStopsOn(t *testing.T) {
	runtime.LockOSThread() // the tracer: the thread that forked
	defer runtime.UnlockOSThread()
	var out strings.Builder
	cmd := tracedSh(`trap 'echo got USR1' USR1; kill -USR1 $$; echo after`, &out)
	cmd.SysProcAttr.Ptrace = true
	if err := startRegistered(cmd); err != nil {
		t.Fatal(err)
	}
	defer unregister(cmd.Process.Pid)
	pid := cmd.Process.Pid
	if stopped, err := stoppedAtExec(pid); !stopped || err != nil {
		t.Fatalf("the exec's stop: %v, %v", stopped, err)
	}
	if err := unix.PtraceCont(pid, 0); err != nil { // still traced: its own kill stops it
		t.Fatal(err)
	}
	if stopped, err := stoppedAtExec(pid); stopped || err != nil {
		t.Fatalf("after the signal: stopped %v, %v; want its end left to Wait", stopped, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("job: %v, output %q", err, out.String())
	}
	if got := strings.Fields(out.String()); strings.Join(got, " ") != "got USR1 after" {
		t.Errorf("job printed %q, want its trap to have run", got)
	}
}
