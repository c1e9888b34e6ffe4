package ctl

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxSockPath is the longest socket path: sun_path holds 108 bytes with
// the terminating NUL.
const maxSockPath = 107

// probeTimeout bounds the connect that tells a live socket from a stale
// one. A live daemon's kernel backlog answers at once, even when the
// daemon is busy.
const probeTimeout = time.Second

// Listen binds the control socket at path, mode 0600, for a daemon.
//
// Several daemons may share a state dir, so Listen never takes a live
// daemon's socket: it first takes an exclusive flock on path+".lock"
// (never deleted, like the job lock files), held until the returned
// listener is closed; a daemon holding it means ErrInUse. Holding it, an
// existing socket file that answers a connect (a daemon that does not take
// the flock) is also ErrInUse; one that refuses is stale, left by a daemon
// that died, and is replaced. A path that exists and is not a socket is an
// error and is left alone.
//
// The mode is set by chmod right after bind, not through the umask, which
// is process-wide and would race with jobs being started. In the moment
// between the two the socket may be reachable by others when the state
// dir is not private, but Serve refuses every peer of another uid anyway
// (and a supervisor refuses to start in a state dir others may write).
//
// Closing the listener removes the socket file, then releases the flock.
func Listen(path string) (net.Listener, error) {
	if len(path) > maxSockPath {
		return nil, fmt.Errorf("control socket %s: path is %d bytes, longer than the %d a unix socket allows; use a shorter state_dir",
			path, len(path), maxSockPath)
	}
	lf, err := lockSocket(path + ".lock")
	if err != nil {
		return nil, err
	}
	ln, err := bind(path)
	if err != nil {
		lf.Close()
		return nil, err
	}
	return &listener{UnixListener: ln, lockFile: lf}, nil
}

// listener is the bound socket plus the flock that guards it.
type listener struct {
	*net.UnixListener
	lockFile *os.File
	once     sync.Once
	err      error
}

// Close unlinks the socket (net.UnixListener does, before closing its
// descriptor) while the flock still keeps other daemons from binding, and
// only then releases the flock. Calling it again returns the first result.
func (l *listener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		if err := l.lockFile.Close(); l.err == nil {
			l.err = err
		}
	})
	return l.err
}

// lockSocket takes the flock that serialises the check-then-bind of
// daemons sharing a state dir. Go opens files close-on-exec, so jobs do
// not inherit it and cannot keep it held after the daemon dies.
func lockSocket(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		return f, nil
	}
	f.Close()
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, fmt.Errorf("%w: %s is locked by a running daemon", ErrInUse, path)
	}
	return nil, fmt.Errorf("control socket lock %s: flock: %w", path, err)
}

// bind replaces a stale socket at path, binds and restricts the mode.
func bind(path string) (*net.UnixListener, error) {
	if err := clearStale(path); err != nil {
		return nil, err
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// clearStale removes a socket file at path that no one listens on. When it
// cannot tell (a connect failing other than with ECONNREFUSED, such as
// EACCES on another user's socket) it keeps the file and reports ErrInUse:
// running without a socket is better than stealing a live daemon's.
func clearStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("control socket %s: exists and is not a socket (%s); not removing it", path, fi.Mode().Type())
	}
	c, err := net.DialTimeout("unix", path, probeTimeout)
	switch {
	case err == nil:
		c.Close()
		return fmt.Errorf("%w: %s answers", ErrInUse, path)
	case errors.Is(err, syscall.ENOENT):
		return nil
	case !errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w: %s: cannot tell whether a daemon serves it: %w", ErrInUse, path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("control socket: removing stale socket: %w", err)
	}
	return nil
}

// Server returns the pid and uid of the process serving the control
// socket at path, as the kernel recorded them (SO_PEERCRED of a
// connection to it).
func Server(path string) (pid int, uid uint32, err error) {
	c, err := net.DialTimeout("unix", path, probeTimeout)
	if err != nil {
		return 0, 0, err
	}
	defer c.Close()
	cred, err := peerCred(c)
	if err != nil {
		return 0, 0, err
	}
	return int(cred.Pid), cred.Uid, nil
}
