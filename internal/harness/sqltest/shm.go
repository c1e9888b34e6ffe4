package sqltest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// awaitShmDetached waits, for at most d, until no process is attached to
// the System V shared memory segment a PostgreSQL server in dir named in
// its postmaster.pid: a server started again while one is attached
// refuses to ("pre-existing shared memory block is still in use"), and
// the last backend of a SIGKILLed group can let go of it after the group
// looks gone in /proc. A server without such a file (MariaDB) has none.
func awaitShmDetached(dir string, d time.Duration) {
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	f := strings.Fields(lines[len(lines)-1]) // "KEY ID"
	if len(lines) < 7 || len(f) != 2 {
		return
	}
	id, err := strconv.Atoi(f[1])
	if err != nil {
		return
	}
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var desc unix.SysvShmDesc
		if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &desc); err != nil || desc.Nattch == 0 {
			return // removed, or nobody attached
		}
	}
}
