// Package statedir decides whether a state dir may be trusted, as sshd's
// StrictModes and gpg's "unsafe permissions" check decide for theirs.
//
// Whoever can write the state dir can swap a lock file (two copies of a
// job run at once) or plant a control socket that answers for the daemon.
// So a supervisor refuses to start when the state dir, its locks/, a lock
// file, the control socket or the socket's lock file is owned by another
// user (root excepted) or writable by group or others. There is no
// exception for a sticky directory: it keeps others from renaming our
// files, but not from creating the lock file of a job before its first
// run. Nothing is repaired: the error names each path, its owner and mode,
// and the operator decides.
package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// Names inside the state dir that the check covers.
const (
	LocksDir   = "locks"
	Socket     = "cronvisor.sock"
	SocketLock = "cronvisor.sock.lock"
)

// UnsafeError is one path that another user owns or may write.
type UnsafeError struct {
	Path string
	UID  uint32      // the path's owner
	Mode fs.FileMode // its mode, as Lstat (or Stat, for a symlinked dir) gave it
	Why  string      // what is wrong: "owned by another user", "writable by group", ...
	Self int         // the effective uid that refused it
}

// Error names the path, its owner by name and uid, its mode, and the rule.
func (e *UnsafeError) Error() string {
	owners := "root"
	if e.Self != 0 {
		owners = UserName(uint32(e.Self)) + " or root"
	}
	return fmt.Sprintf("unsafe state dir: %s is %s (owner %s, mode %s); cronvisor trusts only paths owned by %s and writable by their owner alone",
		e.Path, e.Why, UserName(e.UID), e.Mode, owners)
}

// UserName is "name (uid N)", or "uid N" when the uid has no name.
func UserName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}

// Check checks dir for the effective uid of this process. A path that does
// not exist yet passes: cronvisor creates what it needs 0700 (dirs) and
// 0600 (files). Every unsafe path is reported, joined; a path that cannot
// be examined is an error too.
func Check(dir string) error { return check(dir, os.Geteuid()) }

func check(dir string, self int) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	add(checkDir(dir, self))
	locks := filepath.Join(dir, LocksDir)
	add(checkDir(locks, self))
	lockFiles, err := filepath.Glob(filepath.Join(locks, "*.lock"))
	add(err) // only a bad pattern, which this one is not
	for _, f := range append(lockFiles, filepath.Join(dir, Socket), filepath.Join(dir, SocketLock)) {
		add(checkFile(f, self))
	}
	return errors.Join(errs...)
}

// checkDir checks a directory and, when it is a symlink (a state dir
// placed elsewhere), the link and what it points to.
func checkDir(path string, self int) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unsafe state dir: cannot examine %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSymlink {
		return judge(path, fi, self, true)
	}
	if err := judge(path, fi, self, false); err != nil {
		return err
	}
	if fi, err = os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("unsafe state dir: %s is a dangling symlink", path)
		}
		return fmt.Errorf("unsafe state dir: cannot examine %s: %w", path, err)
	}
	return judge(path, fi, self, true)
}

// checkFile checks a file without following a symlink: the lock package
// opens lock files with O_NOFOLLOW and refuses a symlink at each fire, so
// only who planted it matters here; a symlink's own mode means nothing.
func checkFile(path string, self int) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("unsafe state dir: cannot examine %s: %w", path, err)
	}
	return judge(path, fi, self, fi.Mode().Type() != fs.ModeSymlink)
}

// judge applies the rule to one path's metadata; withMode is false for a
// symlink, whose permission bits are always 0777 and never consulted.
func judge(path string, fi fs.FileInfo, self int, withMode bool) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("unsafe state dir: cannot tell the owner of %s", path)
	}
	bad := &UnsafeError{Path: path, UID: st.Uid, Mode: fi.Mode(), Self: self}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid != 0 && int(st.Uid) != self:
		bad.Why = "owned by another user"
	case withMode && perm&0o002 != 0:
		bad.Why = "writable by others"
	case withMode && perm&0o020 != 0:
		bad.Why = "writable by its group"
	default:
		return nil
	}
	return bad
}
