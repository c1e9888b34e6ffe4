package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
)

// Keepers starts keeper processes and hands them runs: one keeper process
// per state dir (the directory of the runs' Ends) keeps every run of this
// process under it, so a run costs a socket pair and two messages, not a
// process. A keeper that died is replaced at the next run.
type Keepers struct {
	mu    sync.Mutex
	procs map[string]*keeperProc // by the directory of the Ends
}

// NewKeepers returns a pool of its own: runs whose keeper must not share
// a process with those of the rest of this process (a test that kills
// its run's keeper).
func NewKeepers() *Keepers { return &Keepers{} }

// processKeepers is the pool of a Spec without one. Process-wide because
// what a keeper stands in for, the supervisor's death, is the process's.
var processKeepers = NewKeepers()

// keeperProc is a running keeper process, from its supervisor's side.
type keeperProc struct {
	cmd      *exec.Cmd
	ctl      *os.File      // SOCK_SEQPACKET: one message per run, its descriptors attached
	deferral *deferral     // nil: every run is handed over eagerly
	gone     chan struct{} // closed once the process has exited and been reaped
	kept     atomic.Int64  // runs handed and not stopped: running, or left to it
}

// keeperFor returns the live keeper process for the Ends in dir, started
// if there is none.
func (p *Keepers) keeperFor(dir string) (*keeperProc, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if kp := p.procs[dir]; kp != nil && !isClosed(kp.gone) {
		return kp, nil
	}
	kp, err := startKeeperProc(dir)
	if err != nil {
		return nil, err
	}
	if p.procs == nil {
		p.procs = map[string]*keeperProc{}
	}
	p.procs[dir] = kp
	return kp, nil
}

// forget drops kp if it is still the keeper for dir: the next run starts
// another.
func (p *Keepers) forget(dir string, kp *keeperProc) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.procs[dir] == kp {
		delete(p.procs, dir)
	}
}

// Close kills this pool's keeper processes and waits for them: for a
// pool whose runs are all over.
func (p *Keepers) Close() {
	p.mu.Lock()
	procs := p.procs
	p.procs = nil
	p.mu.Unlock()
	for _, kp := range procs {
		kp.kill()
	}
}

// releaseWait bounds Release's wait for an idle keeper's exit.
const releaseWait = 2 * time.Second

// Release lets go of this pool's keeper processes: each exits once the
// runs it keeps are over (those handed over to it, ErrDetach), at once
// if it keeps none, which Release waits for. A run started after it
// starts a new keeper.
func (p *Keepers) Release() {
	p.mu.Lock()
	procs := p.procs
	p.procs = nil
	p.mu.Unlock()
	for _, kp := range procs {
		kp.ctl.Close()
		if kp.kept.Load() > 0 {
			continue
		}
		select {
		case <-kp.gone:
		case <-time.After(releaseWait):
		}
	}
}

// hand gives a run to a keeper process: its arguments (keeperArgs) and
// files (tether, lock, stdout, stderr, session). A keeper found dead is
// replaced once.
func (p *Keepers) hand(dir string, args []string, files []int) (*keeperProc, error) {
	var err error
	for range 2 {
		var kp *keeperProc
		if kp, err = p.keeperFor(dir); err != nil {
			return nil, err
		}
		if err = kp.send(args, files); err == nil {
			kp.kept.Add(1)
			return kp, nil
		}
		p.forget(dir, kp)
	}
	return nil, err
}

// handDeferred gives a run to the keeper process for dir without waking
// it (see keeperdefer.go); a nil run if it cannot be.
func (p *Keepers) handDeferred(dir string, args []string, handed []*os.File) (*keeperProc, *deferredRun) {
	kp, err := p.keeperFor(dir)
	if err != nil {
		return nil, nil
	}
	fds, err := descriptors(-1, handed)
	if err != nil {
		return nil, nil
	}
	return kp, kp.handDeferred(args, fds[1:])
}

// startKeeperProc starts a keeper process: this executable again under
// argv[0] KeeperName, in a process group of its own (a kill of the
// supervisor's group leaves it to do its work), with its end of the
// control socket as fd 3. Its environment is the supervisor's, which
// never holds a run's tag, so it is not taken for a process of a run.
func startKeeperProc(dir string) (*keeperProc, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socketpair", err)
	}
	mine, theirs := os.NewFile(uintptr(fds[0]), "keeper"), os.NewFile(uintptr(fds[1]), "keeper")
	defer theirs.Close()
	stdin, err := devNull()
	if err != nil {
		mine.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        keeperExe,
		Args:        []string{KeeperName, "-ends", dir, "-supervisor", strconv.Itoa(procfs.Self())},
		Stdin:       stdin,
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// Without its means (no memfd, say) every run is handed over eagerly.
	d, deferFiles, err := newDeferral()
	if err == nil {
		cmd.Args = append(cmd.Args, "-deferred")
		cmd.ExtraFiles = append(cmd.ExtraFiles, deferFiles...)
		defer closeAll(deferFiles)
	}
	if err := startRegistered(cmd); err != nil {
		mine.Close()
		d.close()
		return nil, err
	}
	kp := &keeperProc{cmd: cmd, ctl: mine, deferral: d, gone: make(chan struct{})}
	go func() { // owned by the process: ends with the keeper's exit
		_ = cmd.Wait()
		unregister(cmd.Process.Pid)
		close(kp.gone)
		kp.deferral.drop() // its runs in flight hold it until their stop
	}()
	if !awaitReady(int(mine.Fd()), readyWait) {
		kp.kill()
		return nil, fmt.Errorf("keeper process %d did not start", cmd.Process.Pid)
	}
	return kp, nil
}

// readyWait bounds a keeper process's start: the Go runtime's start and
// every package's initialisers, then its socket.
const readyWait = 10 * time.Second

// awaitReady waits for a new keeper's "ready" on its control socket.
func awaitReady(fd int, d time.Duration) bool {
	buf := make([]byte, 16)
	n, err, ok := readBefore(fd, time.Now().Add(d), buf)
	return ok && err == nil && string(buf[:n]) == msgReady
}

// readBefore waits until fd (a blocking descriptor) is readable, then
// reads it once into buf; ok is false if the deadline passed first or
// the wait failed.
func readBefore(fd int, deadline time.Time, buf []byte) (n int, err error, ok bool) {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil, false
		}
		if _, err := unix.Poll(p, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			return 0, nil, false
		}
		if p[0].Revents != 0 {
			n, err := unix.Read(fd, buf)
			return n, err, true
		}
	}
}

// send hands the keeper one run.
func (kp *keeperProc) send(args []string, files []int) error {
	msg := encodeHandover(args)
	if err := unix.Sendmsg(int(kp.ctl.Fd()), msg, unix.UnixRights(files...), nil, unix.MSG_NOSIGNAL); err != nil {
		return os.NewSyscallError("sendmsg", err)
	}
	return nil
}

// askSweep asks the keeper to sweep its deferred runs.
func (kp *keeperProc) askSweep() {
	_ = unix.Sendmsg(int(kp.ctl.Fd()), []byte(msgSweep), nil, nil, unix.MSG_DONTWAIT|unix.MSG_NOSIGNAL)
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// kill ends the keeper process at once and waits for it: its copies of
// the runs' locks are gone when this returns.
func (kp *keeperProc) kill() {
	_ = kp.cmd.Process.Kill() // not reaped before gone is closed, so the pid is still its own
	<-kp.gone
	kp.ctl.Close()
}

// endsDir is the directory of a keeper's End: the runs it keeps there
// are those of one state dir, which recovery looks its keepers up by.
func endsDir(end string) string {
	if end == "" {
		return ""
	}
	return filepath.Dir(end)
}

// errKeeperGone is a keeper process's exit, as a run's keeper sees it.
var errKeeperGone = errors.New("keeper process exited")
