package proc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/harness/testlog"
)

// inProcessKeeper is a keeper process's deferral with its keeper's side
// in this test process: the test sweeps when it chooses.
type inProcessKeeper struct {
	pool *Keepers
	srv  *keeperServer
	end  string // a run's End path in the pool's dir
	ctl  int    // the keeper's end of its control socket
}

func newInProcessKeeper(t *testing.T) *inProcessKeeper {
	t.Helper()
	d, theirs, err := newDeferral()
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	fds := make([]int, len(theirs))
	for i, f := range theirs {
		if fds[i], err = unix.Dup(int(f.Fd())); err != nil {
			t.Fatal(err)
		}
	}
	closeAll(theirs)
	kd := openKeeperDeferral(fds[0], fds[1], fds[2])
	if kd == nil {
		t.Fatal("the keeper's side of the deferral does not open")
	}
	watched := make(chan struct{})
	go func() { defer close(watched); kd.watchExits() }()
	self, _ := os.FindProcess(os.Getpid())
	kp := &keeperProc{cmd: &exec.Cmd{Process: self}, ctl: os.NewFile(uintptr(ctl[0]), "control"), deferral: d, gone: make(chan struct{})}
	dir := t.TempDir()
	t.Cleanup(func() {
		kd.closeExits()
		<-watched
		unix.Close(kd.mail)
		unix.Close(ctl[1])
		kp.ctl.Close()
		d.drop()
	})
	srv := newKeeperServer(nil)
	srv.deferral = kd
	return &inProcessKeeper{pool: &Keepers{procs: map[string]*keeperProc{dir: kp}}, srv: srv, end: filepath.Join(dir, "run.end"), ctl: ctl[1]}
}

// held is how many tethers the keeper holds, and how many runs it keeps.
func (k *inProcessKeeper) held() (tethers, kept int) {
	k.srv.deferral.mu.Lock()
	tethers = len(k.srv.deferral.held)
	k.srv.deferral.mu.Unlock()
	k.srv.mu.Lock()
	defer k.srv.mu.Unlock()
	return tethers, len(k.srv.runs)
}

// spec is a run of script under a locked file, handed over deferred to
// this keeper; started is called once the run started.
func (k *inProcessKeeper) spec(t *testing.T, script string, started func()) (Spec, *os.File) {
	t.Helper()
	lock := lockedFile(t)
	spec := testSpec(t, script)
	spec.ExtraFiles = []*os.File{lock}
	spec.Keeper, spec.Keepers = &Keeper{End: k.end}, k.pool
	onStart := spec.OnStart
	spec.OnStart = func(pid int) {
		onStart(pid)
		started()
	}
	return spec, lock
}

// lockedFile is a lock file flocked by this process, as the file
// backend hands it to a run.
func lockedFile(t *testing.T) *os.File {
	t.Helper()
	f := lockFile(t)
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	return f
}

// lockFree reports whether a new open file description of f's file can
// take its lock: no copy of the run's description holds it any more.
func lockFree(t *testing.T, f *os.File) bool {
	t.Helper()
	g, err := os.Open(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	return unix.Flock(int(g.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil
}

// TestDeferredRunWaitsInItsTether: a run handed over deferred stays in
// its tether while its supervisor lives (a sweep holds the tether, keeps
// no run), and at its end the supervisor takes the lock's copy back: the
// lock is free the moment the supervisor's own descriptor closes, and
// the next sweep finds the tether let go of, empty, and closes it. (The
// keeper's watch of the exit races the supervisor's own here; a frozen
// supervisor, below, leaves it the only one.)
func TestDeferredRunWaitsInItsTether(t *testing.T) {
	t.Parallel()
	k := newInProcessKeeper(t)
	var during [2]int
	spec, lock := k.spec(t, "sleep 0.3; exit 3", func() {
		k.srv.sweep(false)
		during[0], during[1] = k.held()
	})
	res := Run(within(t, 10*time.Second), spec)
	if res.Outcome != Exited || res.ExitCode != 3 {
		t.Fatalf("run ended %+v, want exit 3", res)
	}
	if during != [2]int{1, 0} {
		t.Errorf("during the run the keeper held %d tethers and kept %d runs, want 1 and 0", during[0], during[1])
	}
	if took := res.Exited.Sub(res.Started); took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("the main process exited %v after its start, want about 300 ms", took)
	}
	lock.Close()
	if !lockFree(t, lock) {
		t.Errorf("the lock is still held once the supervisor closed its descriptor")
	}
	k.srv.sweep(false)
	if tethers, kept := k.held(); tethers != 0 || kept != 0 {
		t.Errorf("after the run the keeper holds %d tethers and keeps %d runs, want none", tethers, kept)
	}
}

// TestDeferredRunTakenOverWhileItsSupervisorLives: a keeper that takes a
// deferred run over while its supervisor lives (its control socket
// ended as the supervisor let go of it) holds the run's descriptors; the
// supervisor's stop then finds its packet gone and waits, as an eager
// stop does, until the keeper let go: the lock is free, and no End is
// written for a run its supervisor saw to its end.
func TestDeferredRunTakenOverWhileItsSupervisorLives(t *testing.T) {
	t.Parallel()
	k := newInProcessKeeper(t)
	var kept int
	spec, lock := k.spec(t, "sleep 0.2", func() {
		k.srv.sweep(true)
		_, kept = k.held()
	})
	res := Run(within(t, 10*time.Second), spec)
	k.srv.wg.Wait()
	if res.Outcome != Exited || res.ExitCode != 0 {
		t.Fatalf("run ended %+v, want exit 0", res)
	}
	if kept != 1 {
		t.Errorf("the keeper keeps %d runs after the final sweep, want 1", kept)
	}
	lock.Close()
	if !lockFree(t, lock) {
		t.Errorf("the lock is still held once the supervisor closed its descriptor")
	}
	if _, err := os.Stat(k.end); !os.IsNotExist(err) {
		t.Errorf("the keeper wrote an End for a run its supervisor saw end (stat: %v)", err)
	}
}

// startDeferredSupervisor starts a helper supervisor of one run handed
// over deferred to a real keeper process, and returns it with the run's
// main pid and the helper's output.
func startDeferredSupervisor(t *testing.T, script, end string) (*exec.Cmd, int, *bufio.Reader) {
	t.Helper()
	tag := fmt.Sprintf("CRONVISOR_RUN_ID=test-%d-%d", os.Getpid(), runSeq.Add(1))
	sup := exec.Command("/proc/self/exe")
	sup.Env = append(os.Environ(), sessionTag, supervisorEnv+"="+script, "PROCTEST_TAG="+tag, deferredEnv+"="+end)
	stdout, err := sup.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	startOutside(t, sup)
	t.Cleanup(func() {
		for _, pid := range tagged(tag) {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	})
	out := bufio.NewReader(stdout)
	var main int
	if _, err := fmt.Fscanf(out, "pid %d\n", &main); err != nil {
		t.Fatalf("supervisor: %v", err)
	}
	return sup, main, out
}

// TestDeferredRunsExitSeenWhileItsSupervisorIsFrozen: the run exits
// after 0.3 s while its supervisor is SIGSTOPped for 1.5 s; continued,
// the supervisor reports the exit at its own time, which only the
// keeper's watch saw.
func TestDeferredRunsExitSeenWhileItsSupervisorIsFrozen(t *testing.T) {
	t.Parallel()
	sup, _, out := startDeferredSupervisor(t, "sleep 0.3", filepath.Join(t.TempDir(), "run.end"))
	if err := sup.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := sup.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	line, _ := out.ReadString('\n')
	var code, ms int
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "run ended: exit %d after %d ms", &code, &ms); err != nil {
		t.Fatalf("supervisor said %q: %v", line, err)
	}
	if code != 0 || ms < 250 || ms > 1000 {
		t.Errorf("run ended with exit %d after %d ms, want exit 0 after about 300 ms", code, ms)
	}
	_ = sup.Wait()
}

// TestDeferredRunGuardedWhenItsSupervisorDies: the supervisor of a
// deferred run is SIGKILLed; its keeper, never woken for the run until
// then, takes it from its tether, ends it at its deadline (1 s) and
// writes its End.
func TestDeferredRunGuardedWhenItsSupervisorDies(t *testing.T) {
	t.Parallel()
	end := filepath.Join(t.TempDir(), "run.end")
	sup, main, _ := startDeferredSupervisor(t, "sleep 30", end)
	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sup.Wait()
	var e End
	if !testlog.Poll(8*time.Second, func() bool { var err error; e, err = ReadEnd(end); return err == nil }) {
		t.Fatalf("no End written within 8 s of the supervisor's death")
	}
	if e.Outcome != TimedOut || e.Run.PID != main {
		t.Errorf("End %+v, want the run (pid %d) timed out", e, main)
	}
	if !gone(main) {
		t.Errorf("the run's main process %d is still alive", main)
	}
}

// TestTheKeepersCopiesAreCloseOnExec: the descriptors a keeper process
// is started with are held here until it has started; a run forked
// meanwhile must not inherit one (the keeper gets them through
// ExtraFiles, which does not need them inheritable here).
func TestTheKeepersCopiesAreCloseOnExec(t *testing.T) {
	d, theirs, err := newDeferral()
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	for _, f := range theirs {
		flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC == 0 {
			t.Errorf("%s (fd %d): flags %#x, %v; want FD_CLOEXEC", f.Name(), f.Fd(), flags, err)
		}
		f.Close()
	}
}
