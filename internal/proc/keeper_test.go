package proc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/proc/cgroup"
)

// supervisorEnv makes the test binary a supervisor of one guarded run (see
// TestMain): it runs the shell script in the variable, prints the run's
// pid, and waits to be killed.
const supervisorEnv = "PROCTEST_GUARDED_SUPERVISOR"

// guardedSupervisor is the body of such a helper process.
func guardedSupervisor(script string) int {
	if err := EnableSubreaper(); err != nil { // as the daemon is
		return 1
	}
	spec := Spec{
		Argv:      []string{"/bin/sh", "-c", script},
		Tag:       os.Getenv("PROCTEST_TAG"),
		KillGrace: 10 * time.Second, // longer than the guard may wait
		Keeper:    &Keeper{EndAtOnce: true, Within: time.Second},
		OnStart:   func(pid int) { fmt.Printf("pid %d\n", pid) },
	}
	if os.Getenv(cgroupEnv) != "" {
		h, err := cgroup.Detect()
		if err != nil {
			return 1
		}
		spec.Cgroup = h
	}
	if os.Getenv(runAsNobodyEnv) != "" {
		spec.Credential = &syscall.Credential{Uid: nobodyID, Gid: nobodyID}
	}
	if end := os.Getenv(deferredEnv); end != "" {
		// A deferred hand-over: the keeper is not woken for the run.
		spec.Keeper = &Keeper{End: end, Deadline: time.Now().Add(time.Second), Timeout: time.Second}
		res := Run(context.Background(), spec)
		fmt.Printf("run ended: exit %d after %d ms\n", res.ExitCode, res.Exited.Sub(res.Started).Milliseconds())
		return 0
	}
	res := Run(context.Background(), spec)
	fmt.Printf("run ended: %+v\n", res) // only if the test's kill failed
	return 1
}

// deferredEnv makes the guarded supervisor hand its run over deferred,
// with this End path, a 1 s deadline, and its result printed.
const deferredEnv = "PROCTEST_DEFERRED_END"

// guards lists the live keeper processes that keep the run tagged tag,
// as their sockets tell.
func guards(tag string) []int {
	all, _ := procfs.PIDs()
	var out []int
	for _, pid := range all {
		b, err := procfs.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil || !strings.HasPrefix(string(b), KeeperName+"\x00") || gone(pid) {
			continue
		}
		runs, _ := KeptRuns(pid)
		for _, r := range runs {
			if r.RunID == runIDOf(tag) {
				out = append(out, pid)
			}
		}
	}
	return out
}

// runAsNobodyEnv makes the guarded supervisor run its run as nobody
// (uid and gid 65534), as a job with user: nobody runs.
const (
	runAsNobodyEnv = "PROCTEST_RUN_AS_NOBODY"
	nobodyID       = 65534
)

// TestGuardEndsTheRunWhenItsSupervisorDies SIGKILLs a supervisor in the
// middle of a guarded run: its guard must end the run's process group and
// its setsid'd descendant (found by the tag), politely first, and by
// SIGKILL within Keeper.Within for a process that ignores SIGTERM. Also
// for a run as another user (user:): the guard, root as its supervisor
// is, still finds and signals it.
func TestGuardEndsTheRunWhenItsSupervisorDies(t *testing.T) {
	t.Parallel()
	t.Run("same user", func(t *testing.T) { t.Parallel(); guardEndsTheRun(t, false) })
	t.Run("run as nobody", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Fatal("a run as another user needs a root supervisor (CI runs as root)")
		}
		t.Parallel()
		guardEndsTheRun(t, true)
	})
}

func guardEndsTheRun(t *testing.T, asNobody bool) {
	dir := t.TempDir()
	var env []string
	if asNobody {
		// The run writes its pids here as nobody.
		for d, mode := range map[string]os.FileMode{filepath.Dir(dir): 0o755, dir: 0o777} {
			if err := os.Chmod(d, mode); err != nil {
				t.Fatal(err)
			}
		}
		env = append(env, runAsNobodyEnv+"=1")
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	script := fmt.Sprintf(`trap 'echo term > %[1]s; exit 143' TERM
setsid /bin/sh -c 'echo $$ > %[2]s; exec sleep 30' &
/bin/sh -c 'trap "" TERM; echo $$ > %[3]s; while :; do sleep 0.05; done' &
sleep 30 & wait`, p("term"), p("escapee"), p("stubborn"))
	tag := fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1))
	sup := exec.Command("/proc/self/exe")
	sup.Env = append(append(os.Environ(), env...), sessionTag, supervisorEnv+"="+script, "PROCTEST_TAG="+tag)
	stdout, err := sup.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startOutside(t, sup)
	t.Cleanup(func() {
		for _, pid := range slices.Concat(tagged(tag), guards(tag)) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	})
	var main int
	if _, err := fmt.Fscanf(bufio.NewReader(stdout), "pid %d\n", &main); err != nil {
		t.Fatalf("supervisor: %v", err)
	}
	escapee, stubborn := readPID(t, p("escapee")), readPID(t, p("stubborn"))
	// The keeper takes a handed-over run from its socket's queue when it
	// gets to it: the hand-over does not wait for that.
	if !testlog.Poll(2*time.Second, func() bool { return len(guards(tag)) == 1 }) {
		t.Fatalf("guards of the run: %v, want one", guards(tag))
	}
	if asNobody {
		for _, pid := range []int{main, escapee, stubborn} {
			if uid := procUID(t, pid); uid != strconv.Itoa(nobodyID) {
				t.Errorf("process %d of the run has uid %s, want %d", pid, uid, nobodyID)
			}
		}
	}

	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	run := []int{main, escapee, stubborn}
	ended := testlog.Poll(5*time.Second, func() bool { return len(tagged(tag)) == 0 })
	took := time.Since(killed)
	t.Logf("run ended %v after its supervisor's SIGKILL (Within 1s)", took.Round(time.Millisecond))
	if !ended {
		t.Fatalf("run %v still alive 5 s after its supervisor died: %v", run, tagged(tag))
	}
	// 1 s of budget, 2 on a loaded machine: well short of the 10 s KillGrace.
	if took > 2*time.Second {
		t.Errorf("the run took %v to end, want about Keeper.Within (1 s)", took)
	}
	if b, _ := os.ReadFile(p("term")); strings.TrimSpace(string(b)) != "term" {
		t.Errorf("the main process was not sent SIGTERM before SIGKILL")
	}
	if !testlog.Poll(2*time.Second, func() bool { return len(guards(tag)) == 0 }) {
		t.Errorf("guard still alive after ending the run: %v", guards(tag))
	}
}

// TestGuardKeepsTheRunAsItIs compares a guarded run with an unguarded one:
// same exit, signal, output, environment and descriptors (the tether does
// not leak into the run), and no guard is left once Run returns.
func TestGuardKeepsTheRunAsItIs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
	}{
		{"exit code and output", `test -n "$CRONVISOR_RUN_ID" && echo tagged; echo err >&2; cat; exit 7`},
		{"descriptors and group", `cd /proc/$$/fd && echo *; test "$(ps -o pgid= $$)" -eq $$ && echo own group`},
		{"killed by a signal", `kill -TERM $$`},
		{"not found", `exec /nonexistent/cmd`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var results [2]Result
			var outs [2]*recorder
			for i, guarded := range []bool{false, true} {
				spec := testSpec(t, tt.script)
				spec.ExtraFiles = []*os.File{lockFile(t)}
				outs[i] = &recorder{}
				spec.OnOutput = outs[i].onOutput
				if guarded {
					spec.Keeper = &Keeper{EndAtOnce: true, Within: time.Second}
				}
				results[i] = Run(within(t, 5*time.Second), spec)
				if g := guards(spec.Tag); len(g) > 0 {
					t.Errorf("guards left after Run returned: %v", g)
				}
			}
			plain, guarded := results[0], results[1]
			if guarded.Outcome != plain.Outcome || guarded.ExitCode != plain.ExitCode || guarded.Signal != plain.Signal || (guarded.Err == nil) != (plain.Err == nil) {
				t.Errorf("guarded run %+v, unguarded %+v", guarded, plain)
			}
			for _, stream := range []string{"stdout", "stderr"} {
				if g, p := outs[1].get(stream), outs[0].get(stream); !slices.Equal(g, p) {
					t.Errorf("%s: guarded %q, unguarded %q", stream, g, p)
				}
			}
			t.Logf("%s: %+v, stdout %q", tt.name, guarded, outs[1].get("stdout"))
		})
	}
}

// TestGuardExitEndsTheRun kills a run's guard: the run is ended, reported
// as Canceled with ErrGuardExited, rather than go on unguarded.
func TestGuardExitEndsTheRun(t *testing.T) {
	t.Parallel()
	spec := testSpec(t, "sleep 30")
	spec.Keeper = &Keeper{EndAtOnce: true, Within: time.Second}
	spec.KillGrace = 100 * time.Millisecond
	spec.Keepers = NewKeepers() // its own keeper process: the test kills it
	t.Cleanup(spec.Keepers.Close)
	onStart := spec.OnStart
	spec.OnStart = func(pid int) {
		onStart(pid)
		// The keeper started before the run; it takes the run from its
		// socket's queue when it gets to it.
		var g []int
		testlog.Poll(2*time.Second, func() bool { g = guards(spec.Tag); return len(g) > 0 })
		for _, pid := range g {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
	start := time.Now()
	res := Run(within(t, 10*time.Second), spec)
	if res.Outcome != Canceled || !errors.Is(res.Err, ErrGuardExited) || time.Since(start) > 3*time.Second {
		t.Fatalf("got %+v after %v, want Canceled with ErrGuardExited at once", res, time.Since(start))
	}
	if !strings.Contains(res.Err.Error(), "signal: killed") {
		t.Errorf("reason %q does not say how the guard ended", res.Err)
	}
}

func TestReadTether(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		sent string
		pid  int
	}{
		{"supervisor died during the run", "pid 42\n", 42},
		{"supervisor died before the run started", "", 0},
		{"unterminated line", "pid 42", 42},
		{"garbage is ignored", "pid x\npid -3\nhello\n", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fds[1])
			if tt.sent != "" {
				_, _ = unix.Write(fds[0], []byte(tt.sent))
			}
			unix.Close(fds[0])
			if pid, pidfd, _, _, _ := readTether(&tether{fd: fds[1]}); pid != tt.pid || pidfd != -1 {
				t.Errorf("readTether(%q) = %d, %d; want %d, -1", tt.sent, pid, pidfd, tt.pid)
			}
		})
	}
}

// TestKeeperMainRefusesBadArguments: a guard started wrongly exits at once
// rather than wait on a descriptor it was not given.
func TestKeeperMainRefusesBadArguments(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"-grace", "soon"}, {"-tag", "X=1", "extra"}, {"-unknown"}} {
		if code := KeeperMain(args, nil); code != 2 {
			t.Errorf("KeeperMain(%q) = %d, want 2", args, code)
		}
	}
}

// TestUrgentCauseShortensTheGrace cancels a run that ignores SIGTERM with
// an Urgent cause: SIGKILL comes after Within/2, not after KillGrace.
func TestUrgentCauseShortensTheGrace(t *testing.T) {
	t.Parallel()
	errLost := errors.New("lock lost")
	ready := filepath.Join(t.TempDir(), "ready")
	spec := testSpec(t, "trap '' TERM; touch "+ready+"; sleep 30")
	spec.KillGrace = 10 * time.Second
	ctx, cancel := context.WithCancelCause(within(t, 20*time.Second))
	done := make(chan Result, 1)
	go func() { done <- Run(ctx, spec) }()
	if !testlog.Poll(5*time.Second, func() bool { _, err := os.Stat(ready); return err == nil }) {
		t.Fatal("the run did not start")
	}
	cancel(&Urgent{Err: errLost, Within: 400 * time.Millisecond})
	start := time.Now()
	res := <-done
	took := time.Since(start)
	t.Logf("ended %v after the cancellation", took.Round(time.Millisecond))
	if res.Outcome != Canceled || !errors.Is(res.Err, errLost) || res.Err.Error() != "lock lost" {
		t.Fatalf("got %+v, want Canceled by the lost lock", res)
	}
	if took < 150*time.Millisecond || took > 2*time.Second { // 200 ms, generously on a loaded machine
		t.Errorf("ended after %v, want SIGKILL after 200 ms", took)
	}
}

// BenchmarkRunGuarded is the cost of a guard on a short run: one more
// fork and exec before the run's own, and a kill and reap after it; and
// of a heartbeat pipe (every run of a supervisor has one), alone and
// handed to the keeper.
func BenchmarkRunGuarded(b *testing.B) {
	for _, c := range []struct {
		name             string
		guarded, hearted bool
	}{{"plain", false, false}, {"heartbeat", false, true}, {"guarded", true, false}, {"guarded+heartbeat", true, true}} {
		b.Run(c.name, func(b *testing.B) {
			spec := Spec{Argv: []string{"/bin/true"}, Tag: "CRONVISOR_RUN_ID=bench-" + strconv.Itoa(os.Getpid())}
			if c.guarded {
				spec.Keeper = &Keeper{EndAtOnce: true, Within: time.Second}
			}
			if c.hearted {
				spec.Heartbeat = &Heartbeat{Timeout: time.Minute, OnBeat: func(Beat) {}}
			}
			for b.Loop() {
				if res := Run(context.Background(), spec); res.ExitCode != 0 {
					b.Fatalf("%+v", res)
				}
			}
		})
	}
}

// procUID is the real uid of pid, from /proc/PID/status.
func procUID(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return ""
}

// TestParseKeeperReadsKeeperArgs: what recovery reads of a keeper
// process's command line is what startKeeperProc wrote.
func TestParseKeeperReadsKeeperArgs(t *testing.T) {
	t.Parallel()
	argv := []string{KeeperName, "-ends", "/state/runs", "-supervisor", "42"}
	got, ok := ParseKeeper(argv)
	want := KeeperInfo{Ends: "/state/runs", SupervisorPID: 42}
	if !ok || got != want {
		t.Errorf("ParseKeeper(%q) = %+v, %v; want %+v", argv, got, ok, want)
	}
	for _, argv := range [][]string{{"sleep", "1"}, {KeeperName, "-tag", "X=1"}, {KeeperName, "-ends", "/x"}} {
		if _, ok := ParseKeeper(argv); ok {
			t.Errorf("ParseKeeper took %q for a keeper", argv)
		}
	}
}
