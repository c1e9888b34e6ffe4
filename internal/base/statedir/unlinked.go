package statedir

import (
	"os"
	"syscall"
)

// Unlinked tells whether f has no name left: its file was deleted, alone
// or with its directory (an `rm -rf` of the state dir), rather than
// renamed or replaced. False when it cannot tell.
func Unlinked(f *os.File) bool {
	if f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 0
}
