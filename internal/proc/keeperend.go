package proc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/statedir"
)

// End is how a run ended that its keeper saw to the end after its
// supervisor died: what the next supervisor records for it.
type End struct {
	RunID   string  `json:"run_id"`
	Outcome Outcome `json:"outcome"` // Exited, TimedOut or Canceled
	// ExitCode is the main process's exit status (128+signal when a
	// signal ended it), -1 when it could not be learnt.
	ExitCode int       `json:"exit_code"`
	Signal   string    `json:"signal,omitempty"`
	Ended    time.Time `json:"ended_at"` // the main process's exit, when it ended by itself
	Reason   string    `json:"reason,omitempty"`
	Replaced bool      `json:"replaced,omitempty"` // Canceled by a replacing fire
	Keeper   int       `json:"keeper_pid"`
	Run      KeptRun   `json:"run"`
	// Usage is what the run cost, read from its cgroup by the keeper
	// once the run was over (absent, and not Measured, without one; an
	// older keeper's End has none either).
	Usage run.Usage `json:"usage,omitzero"`
	// Progress is the text of the newest beat the keeper read of the
	// run's heartbeat, "" if none (it reads them only once the
	// supervisor is dead).
	Progress string `json:"progress,omitempty"`
	// Notes are what went wrong for the keeper on the way (a log it
	// could not write, a full disk), for the next supervisor's log: the
	// keeper has none of its own.
	Notes []string `json:"notes,omitempty"`
}

// WriteEnd writes e to path, atomically (statedir.WriteFileAtomic): a
// reader finds the whole End or none; with sync, also after a power cut.
func WriteEnd(path string, e End, sync bool) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return statedir.WriteFileAtomic(path, append(data, '\n'), 0o600, sync)
}

// ReadEnd reads an End that WriteEnd wrote.
func ReadEnd(path string) (End, error) {
	var e End
	data, err := os.ReadFile(path)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &e); err != nil {
		return e, fmt.Errorf("%s: %w", path, err)
	}
	return e, nil
}

// pidfdInfo is the kernel's struct pidfd_info (linux/pidfd.h) up to
// exit_code: PIDFD_INFO_SIZE_VER0.
type pidfdInfo struct {
	Mask, CgroupID                                                    uint64
	PID, TGID, PPID, RUID, RGID, EUID, EGID, SUID, SGID, FSUID, FSGID uint32
	ExitCode                                                          int32
}

// PIDFD_GET_INFO (_IOWR(0xFF, 11, 64 bytes)) and PIDFD_INFO_EXIT, which
// x/sys/unix lacks: Linux 6.15 keeps a process's exit status for every
// holder of a pidfd of it, whoever reaps it.
const (
	pidfdGetInfo  = 0xC040FF0B
	pidfdInfoExit = 1 << 3
)

// exitStatus is the exit status of pid, which exited, through its pidfd
// (after it was reaped) or, while it is a zombie, its /proc stat: code
// and signal name as Result has them, -1 if unknown.
func exitStatus(pidfd, pid int) (int, string) {
	if pidfd >= 0 {
		info := pidfdInfo{Mask: pidfdInfoExit}
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(pidfd), pidfdGetInfo, uintptr(unsafe.Pointer(&info)))
		if errno == 0 && info.Mask&pidfdInfoExit != 0 {
			return waitCode(syscall.WaitStatus(info.ExitCode))
		}
	}
	if pid > 0 {
		if ws, ok := zombieStatus(pid); ok {
			return waitCode(ws)
		}
	}
	return -1, ""
}

// zombieStatus reads the exit_code field (52) of a zombie's stat.
func zombieStatus(pid int) (syscall.WaitStatus, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return 0, false
	}
	f := strings.Fields(string(b[i+2:])) // f[0] is field 3
	if len(f) < 50 || f[0] != "Z" {
		return 0, false
	}
	n, err := strconv.Atoi(f[49])
	return syscall.WaitStatus(n), err == nil
}

// waitCode turns a wait status into Result's exit code and signal.
func waitCode(ws syscall.WaitStatus) (int, string) {
	switch {
	case ws.Exited():
		return ws.ExitStatus(), ""
	case ws.Signaled():
		return 128 + int(ws.Signal()), unix.SignalName(ws.Signal())
	}
	return -1, ""
}
