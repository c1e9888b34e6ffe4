package systemd

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// IsJournal reports whether f is the stream systemd connected to the
// journal: JOURNAL_STREAM names its device and inode (systemd.exec(5)).
// A process whose stderr was redirected since inherits the variable but
// not the stream, hence the comparison.
func IsJournal(f *os.File) bool {
	v := os.Getenv("JOURNAL_STREAM")
	if v == "" {
		return false
	}
	var dev, ino uint64
	if _, err := fmt.Sscanf(v, "%d:%d", &dev, &ino); err != nil {
		return false
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false
	}
	return uint64(st.Dev) == dev && st.Ino == ino
}
