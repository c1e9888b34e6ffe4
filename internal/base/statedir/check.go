// Package statedir decides whether a state dir may be trusted, as sshd's
// StrictModes and gpg's "unsafe permissions" check decide for theirs.
//
// Whoever can write the state dir can swap a lock file (two copies of a
// job run at once) or plant a control socket that answers for the daemon.
// So a supervisor refuses to start when the state dir, an entry in it
// (locks/, the history, the control socket and its lock file ...) or an
// entry in locks/ is owned by another user (root excepted) or writable by
// group or others. A group-writable path of our own is refused as sshd
// refuses it: the group's other members could write it. There is no
// exception for a sticky directory either: it keeps others from renaming
// our files, but not from creating the lock file of a job before its
// first run. Nothing is repaired: the error names each path, its owner
// and mode, and the operator decides.
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

// UnsafeError is one path that another user owns or may write.
type UnsafeError struct {
	Path string
	UID  uint32      // the path's owner
	Mode fs.FileMode // its mode (for a symlink followed, its target's)
	Why  string      // what is wrong: "owned by another user", "writable by others", ...
	Self int         // the effective uid that refused it
}

// Error names the path, its owner by name and uid, its mode, and the rule.
func (e *UnsafeError) Error() string {
	owners := "root"
	if e.Self != 0 {
		owners = UserName(uint32(e.Self)) + " or root"
	}
	return fmt.Sprintf("unsafe state dir: %s is %s (owner %s, mode %s); cronvisor trusts only paths owned by %s and writable by their owner alone: chown or chmod go-w it, or use another state_dir",
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

// Check checks, for the effective uid of this process, the state dir, every
// entry in it (locks/, the history, the socket and its lock, logs/) and
// the entries of locks/: all of them, or with locks given only those
// locks' files (`run NAME` needs its own lock only, and a state dir may
// hold thousands). A state dir that does not exist yet passes: cronvisor
// creates what it needs, dirs 0700 and files 0600. Every unsafe path is
// reported, joined; a path that cannot be examined is an error too.
func Check(dir string, locks ...string) error { return check(dir, os.Geteuid(), locks) }

func check(dir string, self int, locks []string) error {
	fi, err := examine(dir, true, self)
	if err != nil || fi == nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("state dir %s is not a directory (%s)", dir, fi.Mode().Type())
	}
	var errs []error
	// Entries of the state dir are followed when they are symlinks (a
	// history.db kept elsewhere): what they point to is what gets written.
	errs = append(errs, checkEntries(dir, true, self)...)
	lockDir := Dir(dir).Locks()
	if fi, err := os.Stat(lockDir); err != nil || !fi.IsDir() {
		return errors.Join(errs...)
	}
	// A symlink in locks/ is refused at each fire (O_NOFOLLOW); here only
	// who planted it matters.
	if len(locks) == 0 {
		errs = append(errs, checkEntries(lockDir, false, self)...)
	}
	for _, name := range locks {
		if _, err := examine(Dir(dir).LockFile(name), false, self); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkEntries checks every entry of dir.
func checkEntries(dir string, follow bool, self int) []error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []error{fmt.Errorf("unsafe state dir: cannot list %s: %w", dir, err)}
	}
	var errs []error
	for _, e := range entries {
		if _, err := examine(filepath.Join(dir, e.Name()), follow, self); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// examine applies the rule to path and, when it is a symlink and follow is
// set, to what it points to; it returns what path resolves to, nil when
// there is nothing there. A symlink's own mode is always 0777 and never
// consulted, so only its owner is judged.
func examine(path string, follow bool, self int) (fs.FileInfo, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("unsafe state dir: cannot examine %s: %w", path, err)
	}
	if fi.Mode().Type() != fs.ModeSymlink {
		return fi, judge(path, fi, self, true)
	}
	if err := judge(path, fi, self, false); err != nil || !follow {
		return nil, err
	}
	if fi, err = os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil // dangling: nothing to write through
		}
		return nil, fmt.Errorf("unsafe state dir: cannot examine %s: %w", path, err)
	}
	return fi, judge(path, fi, self, true)
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
