package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInheritedOnExec: a descriptor opened without O_CLOEXEC (as a
// shell leaves them to what it starts) reaches a child until the sweep,
// and not after it: the child's shell then has exactly 0, 1 and 2. Each
// way of sweeping: close_range(2), and /proc/self/fd with fcntl(2).
func TestCloseInheritedOnExec(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sweep func() error
	}{
		{"close_range", cloexecRange},
		{"/proc/self/fd", cloexecListed},
		{"CloseInheritedOnExec", CloseInheritedOnExec},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := unix.Open(os.DevNull, unix.O_RDONLY, 0) // no O_CLOEXEC: inheritable
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			name := strconv.Itoa(fd)
			if got := childFDs(t); !slices.Contains(got, name) {
				t.Fatalf("before the sweep the child has %v, want fd %s among them", got, name)
			}
			if err := tc.sweep(); err != nil {
				t.Fatal(err)
			}
			if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
				t.Errorf("fd %d after the sweep: flags %#x, %v; want FD_CLOEXEC", fd, fl, err)
			}
			if got := childFDs(t); !slices.Equal(got, []string{"0", "1", "2"}) {
				t.Errorf("after the sweep the child has %v, want exactly [0 1 2]", got)
			}
		})
	}
}

// childFDs starts a shell that lists its own descriptors (/proc/$$/fd, so
// that ls's own directory descriptor is not counted; the trailing `:`
// keeps the shell from exec'ing ls in its place).
func childFDs(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("sh", "-c", `ls -1 /proc/$$/fd; :`)
	cmd.Env = append(os.Environ(), sessionTag)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	fds := strings.Fields(string(out))
	slices.SortFunc(fds, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return fds
}

// dupCloexec duplicates fd close-on-exec: a plain dup(2) in one test would
// reach the children of every test running beside it.
func dupCloexec(fd uintptr) (int, error) {
	return unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
}
