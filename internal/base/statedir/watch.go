package statedir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watch tells a daemon that its state dir may have been taken from under
// it: the dir deleted or moved away (`rm -rf STATE_DIR`), or the control
// socket or its lock file unlinked (`rm -rf STATE_DIR/*`). It is an
// inotify instance with narrow masks, so that nothing the daemon itself
// does in the state dir (a history commit, a run's log) wakes it: a
// wake-up is a rare event, and the daemon then compares what is at the
// paths with what it holds.
type Watch struct {
	f      *os.File
	dir    Dir
	parent int // the watch descriptor of the dir's parent
	base   string
}

// Masks of the watches. The dir's own IN_DELETE_SELF comes only once
// nothing pins it, and the daemon's bound socket does: so the parent is
// watched for the dir's removal or move, which comes at the rmdir. The
// socket and its lock file are watched for a change of their link count
// (IN_ATTRIB: their unlink; the daemon holds both, so IN_DELETE_SELF would
// wait for its close).
const (
	dirMask    = unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR
	parentMask = unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_ONLYDIR
	fileMask   = unix.IN_ATTRIB | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF
)

// NewWatch starts watching d; call Arm again once the dir is made anew.
func NewWatch(d Dir) (*Watch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("watch the state dir %s: inotify: %w", d, err)
	}
	// Non-blocking: the runtime's poller waits for it, and Close ends
	// a Wait under way.
	abs, err := filepath.Abs(string(d))
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("watch the state dir %s: %w", d, err)
	}
	w := &Watch{f: os.NewFile(uintptr(fd), "inotify "+string(d)), dir: d, base: filepath.Base(abs)}
	if w.parent, err = unix.InotifyAddWatch(fd, filepath.Dir(abs), parentMask); err != nil {
		w.f.Close()
		return nil, fmt.Errorf("watch the parent of the state dir %s: %w", d, err)
	}
	if err := w.Arm(); err != nil {
		w.f.Close()
		return nil, err
	}
	return w, nil
}

// Arm watches the state dir, its socket and the socket's lock file as
// they are now.
func (w *Watch) Arm() error {
	fd := int(w.f.Fd())
	if _, err := unix.InotifyAddWatch(fd, string(w.dir), dirMask); err != nil {
		return fmt.Errorf("watch the state dir %s: %w", w.dir, err)
	}
	for _, p := range []string{w.dir.Socket(), w.dir.SocketLock()} {
		if _, err := unix.InotifyAddWatch(fd, p, fileMask); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("watch %s: %w", p, err)
		}
	}
	return nil
}

// Wait returns when something happened to the watched paths, or
// os.ErrClosed once Close was called. Of the parent's events only those
// naming the state dir count.
func (w *Watch) Wait() error {
	buf := make([]byte, 4096)
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return err
		}
		if w.relevant(buf[:n]) {
			return nil
		}
	}
}

// relevant tells whether a read of events holds one that counts.
func (w *Watch) relevant(b []byte) bool {
	for len(b) >= unix.SizeofInotifyEvent {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(ev.Len)
		if end > len(b) {
			return true // torn: look anyway
		}
		name := strings.TrimRight(string(b[unix.SizeofInotifyEvent:end]), "\x00")
		if int(ev.Wd) != w.parent || name == w.base || ev.Mask&unix.IN_Q_OVERFLOW != 0 {
			return true
		}
		b = b[end:]
	}
	return false
}

// Close stops the watch; a Wait under way returns os.ErrClosed.
func (w *Watch) Close() error { return w.f.Close() }

// Missing tells whether the state dir is gone from its path.
func (d Dir) Missing() bool {
	_, err := os.Stat(string(d))
	return err != nil && !errors.Is(err, os.ErrPermission)
}

// Remake makes the state dir again, 0700 as at first (an entry of it
// that is needed is made as it is needed), and the directories the
// daemon's parts expect to find: runs/ for the keepers' ends and logs/.
func (d Dir) Remake() error {
	for _, dir := range []string{string(d), d.Keepers(), d.Logs()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("make the state dir again: %w", err)
		}
	}
	return nil
}
