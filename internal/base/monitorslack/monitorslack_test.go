package monitorslack

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMonitorThreadIsTheFirstAfterTheMainOne(t *testing.T) {
	cases := []struct {
		name string
		pid  int
		tids []int
		want int
	}{
		{"in order", 100, []int{100, 101, 102, 105}, 101},
		{"another process took the next id", 100, []int{100, 103, 104, 250}, 103},
		{"ids wrapped after the monitor", 100, []int{100, 101, 7, 9}, 101},
		{"ids wrapped before the monitor", 32767, []int{32767, 4, 5}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, tid := range c.tids {
				if err := os.Mkdir(filepath.Join(dir, strconv.Itoa(tid)), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			got, err := monitorThread(dir, c.pid)
			if err != nil || got != c.want {
				t.Fatalf("monitorThread = %d, %v; want %d", got, err, c.want)
			}
		})
	}
}

func TestAProcessOfOneThreadHasNoMonitorToFind(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "42"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := monitorThread(dir, 42); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v; want ErrNotFound", err)
	}
}

// TestSetChangesTheMonitorsSlackAlone sets the slack in this process
// (root, as the tests run, has CAP_SYS_NICE) and reads every thread's
// back: the monitor's is the new one, the main thread's is untouched.
func TestSetChangesTheMonitorsSlackAlone(t *testing.T) {
	tid, err := monitorThread("/proc/self/task", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	before := slackOf(t, os.Getpid())
	const want = 700 * time.Microsecond
	err = Set(want)
	if os.Geteuid() != 0 { // without CAP_SYS_NICE: refused, nothing changed
		if !errors.Is(err, os.ErrPermission) || slackOf(t, tid) == want {
			t.Fatalf("Set as uid %d: %v, slack %v; want a permission error and no change", os.Geteuid(), err, slackOf(t, tid))
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := slackOf(t, tid); got != want {
		t.Errorf("monitor thread %d: slack %v; want %v", tid, got, want)
	}
	if got := slackOf(t, os.Getpid()); got != before {
		t.Errorf("main thread: slack %v; want it unchanged, %v", got, before)
	}
}

// TestTheThreadFoundIsTheMonitor tells the monitor by what it does: it
// wakes up every few tens of microseconds while a goroutine makes
// system calls, and a long slack makes those wake-ups rare. The thread
// monitorThread finds must wake up several times less often over such
// spells once its slack is long.
func TestTheThreadFoundIsTheMonitor(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatalf("uid %d: this test sets another thread's slack, which takes CAP_SYS_NICE (run the tests as root, as CI does)", os.Geteuid())
	}
	tid, err := monitorThread("/proc/self/task", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer Set(slackOf(t, tid))
	busy := func(slack time.Duration) int64 {
		if err := Set(slack); err != nil {
			t.Fatal(err)
		}
		before := wakeUps(t, tid)
		// Spells of system calls, as a fire makes, between sleeps in
		// which the monitor goes back to its deep sleep.
		for range 10 {
			time.Sleep(5 * time.Millisecond)
			for end := time.Now().Add(15 * time.Millisecond); time.Now().Before(end); {
				syscall.Syscall(syscall.SYS_GETPPID, 0, 0, 0) // entersyscall: wakes the monitor
			}
		}
		return wakeUps(t, tid) - before
	}
	short, long := busy(50*time.Microsecond), busy(20*time.Millisecond)
	t.Logf("thread %d: %d wake-ups with a 50 µs slack, %d with 20 ms", tid, short, long)
	if short < 3*long || short < 20 {
		t.Fatalf("thread %d woke up %d times in busy spells with a 50 µs slack and %d with 20 ms; want a monitor's many, then a third or fewer", tid, short, long)
	}
}

// wakeUps is how many times the thread has been scheduled (schedstat's
// third field).
func wakeUps(t *testing.T, tid int) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc/self/task", strconv.Itoa(tid), "schedstat"))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		t.Fatalf("schedstat %q", b)
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func slackOf(t *testing.T, tid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(tid), "timerslack_ns"))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(n)
}
