package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/procfs"
	"cronvisor/internal/base/statedir"
	"cronvisor/internal/ctl"
)

// LoadPauses reads the pauses in effect, saved in the state dir so that a
// restarted daemon keeps them: STATE_DIR/paused.json (statedir.Dir.Pauses),
// {"JOB": PauseInfo, ...}. No file means no pauses.
func LoadPauses(stateDir string) (map[string]ctl.PauseInfo, error) {
	path := statedir.Dir(stateDir).Pauses()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]ctl.PauseInfo{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pauses: %w", err)
	}
	m := map[string]ctl.PauseInfo{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("pauses: %s: %w", path, err)
	}
	return m, nil
}

// updatePauses applies change to STATE_DIR/paused.json under an exclusive
// flock(2) of paused.json.lock: daemons sharing a state dir each change
// the file as it is, one at a time, and never write back a stale copy
// that drops another's pause. A file that does not decode is not
// overwritten: the error says why nothing was saved.
func updatePauses(stateDir string, change func(map[string]ctl.PauseInfo)) error {
	lf, err := os.OpenFile(statedir.Dir(stateDir).PausesLock(), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("pauses: %w", err)
	}
	defer lf.Close() // releases the flock
	if err := unix.Flock(int(lf.Fd()), unix.LOCK_EX); err != nil {
		return fmt.Errorf("pauses: locking %s: %w", lf.Name(), err)
	}
	m, err := LoadPauses(stateDir)
	if err != nil {
		return err
	}
	change(m)
	return savePauses(stateDir, m)
}

// savePauses replaces STATE_DIR/paused.json atomically and synced
// (statedir.WriteFileAtomic): a crash leaves the old set or the new one,
// never half of one.
func savePauses(stateDir string, m map[string]ctl.PauseInfo) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("pauses: %w", err)
	}
	if err := statedir.WriteFileAtomic(statedir.Dir(stateDir).Pauses(), append(b, '\n'), 0o600, true); err != nil {
		return fmt.Errorf("pauses: %w", err)
	}
	return nil
}

// pauser says who asks for a pause: the peer of the control socket
// connection, else this process (the embedded console).
func pauser(ctx context.Context, now time.Time) ctl.PauseInfo {
	p, ok := ctl.PeerOf(ctx)
	if !ok {
		p = ctl.Peer{UID: os.Getuid(), PID: os.Getpid()}
	}
	info := ctl.PauseInfo{UID: p.UID, PID: p.PID, User: strconv.Itoa(p.UID), Via: command(p.PID), At: now}
	if u, err := user.LookupId(info.User); err == nil {
		info.User = u.Username
	}
	if !ok {
		info.Via = "embedded console"
	}
	return info
}

// command is a process's program name ("cronvisor"); "" when it cannot
// be read.
func command(pid int) string {
	argv, err := procfs.Argv(pid)
	if err != nil || len(argv) == 0 {
		return ""
	}
	return filepath.Base(argv[0])
}
