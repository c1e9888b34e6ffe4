package recovery

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"cronvisor/internal/base/procfs"
)

// Alive tells whether pid is a live supervisor that was already running
// at since (the zero time: at any time). A run whose supervisor is not
// alive is recovered.
type Alive func(pid int, since time.Time) bool

// startSlack absorbs the imprecision of a process's start time as /proc
// gives it (whole seconds of boot time).
const startSlack = 2 * time.Second

// Supervisors is the liveness of other cronvisor supervisors as /proc
// shows them: pid is alive when it runs a cronvisor binary (this one, or
// one whose name says cronvisor) and started no later than since (one
// started after is a reused pid). A zombie, a pid that does not exist,
// and any other program are dead. (A Recoverer judges its own process
// itself: see Config.Self.)
func Supervisors() Alive {
	exe, _ := os.Executable()
	return func(pid int, since time.Time) bool {
		if pid <= 0 {
			return false
		}
		p, err := procfs.Lookup(pid)
		if err != nil || !isCronvisor(p, exe) {
			return false
		}
		return since.IsZero() || p.Started.IsZero() || !p.Started.After(since.Add(startSlack))
	}
}

// isCronvisor reports whether p runs the binary exe or one named cronvisor.
func isCronvisor(p procfs.Process, exe string) bool {
	if exe != "" && p.Exe == exe {
		return true
	}
	return len(p.Argv) > 0 && strings.Contains(filepath.Base(p.Argv[0]), "cronvisor")
}
