package systemd

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/sys/unix"
)

// sent records what a Notifier would have sent.
type sent struct {
	mu     sync.Mutex
	states []string
}

func (s *sent) send(state string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states = append(s.states, state)
	return true, nil
}

func (s *sent) count(state string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.states {
		if st == state {
			n++
		}
	}
	return n
}

func testNotifier(watchdog time.Duration) (*Notifier, *sent, *bytes.Buffer) {
	var logs bytes.Buffer
	s := &sent{}
	return &Notifier{log: slog.New(slog.NewTextHandler(&logs, nil)), send: s.send, watchdog: watchdog}, s, &logs
}

func TestNotifierStates(t *testing.T) {
	n, s, _ := testNotifier(0)
	n.Ready()
	n.Reloading()
	n.Stopping()
	if len(s.states) != 3 || s.states[0] != "READY=1" || s.states[2] != "STOPPING=1" {
		t.Fatalf("states %q", s.states)
	}
	if r := s.states[1]; !strings.HasPrefix(r, "RELOADING=1\nMONOTONIC_USEC=") || len(r) <= len("RELOADING=1\nMONOTONIC_USEC=") {
		t.Errorf("reloading sent %q, want RELOADING=1 and MONOTONIC_USEC", r)
	}
	var none *Notifier
	none.Ready() // a nil Notifier does nothing
	none.Watchdog(func() bool { return true })()
}

// TestWatchdogPingsWhileAlive: a ping each half WatchdogSec while the
// daemon is alive; none, and an error logged, while it is not.
func TestWatchdogPingsWhileAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n, s, logs := testNotifier(2 * time.Second)
		var mu sync.Mutex
		answering := true
		stop := n.Watchdog(func() bool {
			mu.Lock()
			defer mu.Unlock()
			return answering
		})
		time.Sleep(3500 * time.Millisecond)
		if got := s.count("WATCHDOG=1"); got != 4 { // at 0, 1, 2 and 3 s
			t.Errorf("%d pings in 3.5 s at 1 s intervals, want 4", got)
		}
		mu.Lock()
		answering = false
		mu.Unlock()
		time.Sleep(3 * time.Second)
		stop()
		if got := s.count("WATCHDOG=1"); got != 4 {
			t.Errorf("%d pings after the loop stopped answering, want still 4", got)
		}
		if !strings.Contains(logs.String(), "has not woken") {
			t.Errorf("no error logged for the stuck loop: %s", logs.String())
		}
	})
}

func TestIsJournal(t *testing.T) {
	dir := t.TempDir()
	journal, err := os.Create(filepath.Join(dir, "journal"))
	if err != nil {
		t.Fatal(err)
	}
	defer journal.Close()
	other, err := os.Create(filepath.Join(dir, "other"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(journal.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOURNAL_STREAM", strings.Join([]string{uitoa(uint64(st.Dev)), uitoa(st.Ino)}, ":"))
	if !IsJournal(journal) {
		t.Error("the stream JOURNAL_STREAM names is not recognised")
	}
	if IsJournal(other) {
		t.Error("another file is taken for the journal")
	}
	t.Setenv("JOURNAL_STREAM", "")
	if IsJournal(journal) {
		t.Error("without JOURNAL_STREAM a file is taken for the journal")
	}
}

func uitoa(v uint64) string { return strconv.FormatUint(v, 10) }
