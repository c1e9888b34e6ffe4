package proc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/harness/testlog"
)

func TestRunExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		code   int
		signal string
	}{
		{"zero", "exit 0", 0, ""},
		{"three", "exit 3", 3, ""},
		{"killed by a signal", "kill -KILL $$", 137, "SIGKILL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var started int
			spec := testSpec(t, tt.script)
			onStart := spec.OnStart
			spec.OnStart = func(pid int) { started = pid; onStart(pid) }
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != Exited || res.ExitCode != tt.code || res.Signal != tt.signal || res.Err != nil {
				t.Fatalf("got %+v, want exited with code %d signal %q", res, tt.code, tt.signal)
			}
			if started == 0 || started != res.PID {
				t.Errorf("OnStart got pid %d, result has %d", started, res.PID)
			}
			if res.Started.IsZero() || res.Ended.Before(res.Started) {
				t.Errorf("times: started %v ended %v", res.Started, res.Ended)
			}
		})
	}
}

func TestRunOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 70000)
	tests := []struct {
		name           string
		script         string
		stdout, stderr []string
	}{
		{"streams are told apart", "echo out1; echo err1 >&2; echo out2", []string{"out1", "out2"}, []string{"err1"}},
		{"CRLF and empty lines", `printf 'a\r\n\nb\n'`, []string{"a", "", "b"}, nil},
		{"unterminated last line", `printf 'a\nb'`, []string{"a", "b"}, nil},
		{"long line is split at 64 KiB", "printf '%s\\n' " + long, []string{long[:maxLine], long[maxLine:]}, nil},
		{"no output", "true", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			spec := testSpec(t, tt.script)
			spec.OnOutput = rec.onOutput
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != Exited || res.ExitCode != 0 {
				t.Fatalf("got %+v", res)
			}
			if got := rec.get("stdout"); !slices.Equal(got, tt.stdout) {
				t.Errorf("stdout: got %q, want %q", abbrev(got), abbrev(tt.stdout))
			}
			if got := rec.get("stderr"); !slices.Equal(got, tt.stderr) {
				t.Errorf("stderr: got %q, want %q", got, tt.stderr)
			}
		})
	}
}

// abbrev shortens long lines in failure messages.
func abbrev(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 20 {
			l = fmt.Sprintf("%.20s…(%d bytes)", l, len(l))
		}
		out[i] = l
	}
	return out
}

func TestRunEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "mytool"), []byte("#!/bin/sh\necho tool \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv []string
		env  []string
		want []string
	}{
		{"variable", []string{"/bin/sh", "-c", "echo $FOO"}, []string{"FOO=bar baz"}, []string{"bar baz"}},
		{"working directory", []string{"/bin/sh", "-c", "pwd"}, nil, []string{dir}},
		{"PATH of the run, not ours", []string{"mytool", "x"}, []string{"PATH=" + bin + ":/usr/bin:/bin"}, []string{"tool x"}},
		{"relative PATH entry is taken in dir", []string{"mytool", "y"}, []string{"PATH=bin:/usr/bin:/bin"}, []string{"tool y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			spec := testSpec(t, "")
			spec.Argv, spec.Dir, spec.OnOutput = tt.argv, dir, rec.onOutput
			spec.Env = append(spec.Env, tt.env...)
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != Exited || res.ExitCode != 0 {
				t.Fatalf("got %+v", res)
			}
			if got := rec.get("stdout"); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRunStartFailed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("echo no\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		argv []string
		dir  string
		env  []string
		err  error
		code int
	}{
		{"empty command", nil, "", nil, ErrNoCommand, ExitNotFound},
		{"not in PATH", []string{"no-such-command-xyz"}, "", nil, exec.ErrNotFound, ExitNotFound},
		{"missing path", []string{filepath.Join(dir, "missing")}, "", nil, fs.ErrNotExist, ExitNotFound},
		{"missing directory", []string{"/bin/true"}, filepath.Join(dir, "nodir"), nil, fs.ErrNotExist, ExitNotFound},
		{"not executable", []string{plain}, "", nil, fs.ErrPermission, ExitNotExecutable},
		{"not executable in PATH", []string{"plain"}, "", []string{"PATH=" + dir}, fs.ErrPermission, ExitNotExecutable},
		{"path through a file", []string{filepath.Join(plain, "x")}, "", nil, unix.ENOTDIR, ExitNotExecutable},
		{"variable over MAX_ARG_STRLEN", []string{"/bin/true"}, "", []string{"BIG=" + strings.Repeat("x", 3<<20)}, unix.E2BIG, ExitNotExecutable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, "")
			spec.Argv, spec.Dir = tt.argv, tt.dir
			spec.Env = append(spec.Env, tt.env...)
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != StartFailed || res.PID != 0 || res.ExitCode != tt.code || !errors.Is(res.Err, tt.err) {
				t.Fatalf("got %+v (err %v), want start_failed with %v and code %d", res, res.Err, tt.err, tt.code)
			}
		})
	}
}

func TestRunDeadline(t *testing.T) {
	t.Parallel()
	const timeout = 500 * time.Millisecond
	tests := []struct {
		name    string
		script  string
		grace   time.Duration
		signal  string
		minTime time.Duration // the run must not end before this
	}{
		{"sleep is terminated", "sleep 30", 2 * time.Second, "SIGTERM", timeout},
		{"TERM ignored: killed after grace", "trap '' TERM; sleep 30", 300 * time.Millisecond, "SIGKILL", timeout + 300*time.Millisecond},
		{"background grandchildren", "sleep 30 & sleep 30 & sleep 30", 2 * time.Second, "SIGTERM", timeout},
		{"grandchild escaped with setsid", "setsid sleep 30 & sleep 30", 2 * time.Second, "SIGTERM", timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, tt.script)
			spec.KillGrace = tt.grace
			// From before the deadline's clock starts, not from res.Started
			// (after the fork): the run must not end before the deadline.
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			res := Run(ctx, spec)
			took := res.Ended.Sub(t0)
			if res.Outcome != TimedOut || !errors.Is(res.Err, context.DeadlineExceeded) || res.Signal != tt.signal {
				t.Fatalf("got %+v, want timed_out by %s", res, tt.signal)
			}
			if took < tt.minTime || took > tt.minTime+time.Second {
				t.Errorf("took %v, want %v plus a little", took, tt.minTime)
			}
			if left := tagged(spec.Tag); len(left) > 0 {
				t.Errorf("processes of the run left: %v", left)
			}
		})
	}
}

var errReplaced = errors.New("replaced by a newer run")

func TestRunCanceled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		cancelNow bool // cancel before Run rather than once it started
		wantPID   bool
	}{
		{"while running", false, true},
		{"before start", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(within(t, 5*time.Second))
			spec := testSpec(t, "sleep 30")
			onStart := spec.OnStart
			spec.OnStart = func(pid int) { onStart(pid); cancel(errReplaced) }
			if tt.cancelNow {
				cancel(errReplaced)
			}
			res := Run(ctx, spec)
			if res.Outcome != Canceled || !errors.Is(res.Err, errReplaced) || (res.PID != 0) != tt.wantPID {
				t.Fatalf("got %+v, want canceled with %v", res, errReplaced)
			}
		})
	}
}

// TestRunEndsLeftovers checks KillMode=control-group after a normal exit,
// and that an orphan holding the output pipe does not delay completion.
func TestRunEndsLeftovers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		{"background sleep in the group", "sleep 30 & echo hi"},
		{"double fork with setsid", "setsid sleep 30 & echo hi"},
		{"child ignoring TERM", "sh -c 'trap \"\" TERM; sleep 30' & echo hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var rec recorder
			spec := testSpec(t, tt.script)
			spec.KillGrace, spec.OnOutput = 300*time.Millisecond, rec.onOutput
			start := time.Now()
			res := Run(within(t, 5*time.Second), spec)
			if res.Outcome != Exited || res.ExitCode != 0 || res.Err != nil {
				t.Fatalf("got %+v", res)
			}
			if took := time.Since(start); took > time.Second {
				t.Errorf("took %v, want well under a second", took)
			}
			if got := rec.get("stdout"); !slices.Equal(got, []string{"hi"}) {
				t.Errorf("stdout %q, want [hi]", got)
			}
			if left := tagged(spec.Tag); len(left) > 0 {
				t.Errorf("processes of the run left: %v", left)
			}
		})
	}
}

// TestJudgeReapsFirst checks the outcome of a run whose context ended
// before its exit was seen (a supervisor frozen past the deadline sees
// both at once when continued): a process that has exited by itself, a
// zombie not yet collected by cmd.Wait, is judged by its exit; only one
// still running is judged by the context.
func TestJudgeReapsFirst(t *testing.T) {
	t.Parallel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	canceled, cancelCause := context.WithCancelCause(context.Background())
	cancelCause(errReplaced)
	tests := []struct {
		name    string
		script  string
		ctx     context.Context
		want    Outcome
		wantErr error
	}{
		{"exited 0 before the deadline was noticed", "exit 0", expired, Exited, nil},
		{"exited 3 before the deadline was noticed", "exit 3", expired, Exited, nil},
		{"exited before a cancel was noticed", "exit 0", canceled, Exited, nil},
		{"still running at the deadline", "sleep 30", expired, TimedOut, context.DeadlineExceeded},
		{"still running when canceled", "sleep 30", canceled, Canceled, errReplaced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := testSpec(t, tt.script)
			cmd, err := command(spec)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdout, cmd.Stderr = nil, nil
			if err := startRegistered(cmd); err != nil { // registered: the reaper leaves it alone
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			defer func() {
				_ = unix.Kill(-pid, unix.SIGKILL) // its own process group
				_ = cmd.Wait()
				unregister(pid)
				testlog.Poll(2*time.Second, func() bool { return len(tagged(spec.Tag)) == 0 })
			}()
			if tt.want == Exited && !testlog.Poll(2*time.Second, func() bool { return gone(pid) }) {
				t.Fatal("the process did not exit")
			}
			// As Run decides once ctx has ended first; cmd.Wait has not
			// returned yet (waited is open).
			got, err := Exited, error(nil)
			if !endedByItself(pid, make(chan struct{})) {
				got, err = ctxOutcome(tt.ctx)
			}
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("outcome %s, %v; want %s, %v", got, err, tt.want, tt.wantErr)
			}
			if tt.want != Exited {
				return
			}
			// WNOWAIT: the exit status is still there for cmd.Wait.
			_ = cmd.Wait()
			if want := map[string]int{"exit 0": 0, "exit 3": 3}[tt.script]; cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != want {
				t.Errorf("cmd.Wait afterwards: %v, want exit %d", cmd.ProcessState, want)
			}
		})
	}
}
