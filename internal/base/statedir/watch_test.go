package statedir

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// waitFor runs w.Wait and returns its result, or fails after limit.
func waitFor(t *testing.T, w *Watch, limit time.Duration) (bool, error) {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- w.Wait() }()
	select {
	case err := <-got:
		return true, err
	case <-time.After(limit):
		w.Close() // ends the Wait
		<-got
		return false, nil
	}
}

func TestWatch(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, d Dir)
		wakes  bool
	}{
		{"the state dir deleted", func(t *testing.T, d Dir) { mustDo(t, os.RemoveAll(string(d))) }, true},
		{"the state dir moved away", func(t *testing.T, d Dir) { mustDo(t, os.Rename(string(d), string(d)+".old")) }, true},
		{"the socket's lock unlinked", func(t *testing.T, d Dir) { mustDo(t, os.Remove(d.SocketLock())) }, true},
		{"a sibling of the state dir deleted", func(t *testing.T, d Dir) {
			sib := filepath.Join(filepath.Dir(string(d)), "sibling")
			mustDo(t, os.Mkdir(sib, 0o700))
			mustDo(t, os.Remove(sib))
		}, false},
		{"the daemon's own writes", func(t *testing.T, d Dir) {
			mustDo(t, os.WriteFile(d.History(), []byte("commit"), 0o600))
			mustDo(t, os.WriteFile(d.History()+"-wal", []byte("frame"), 0o600))
			mustDo(t, os.MkdirAll(d.JobLogs("a"), 0o700))
			mustDo(t, os.WriteFile(d.RunLog("a", "r1"), []byte("line"), 0o600))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := Dir(tree(t))
			held, err := os.Open(d.SocketLock()) // the daemon holds its lock file open
			mustDo(t, err)
			defer held.Close()
			w, err := NewWatch(d)
			mustDo(t, err)
			defer w.Close()
			tc.change(t, d)
			// A change that wakes it does at once; one that does not
			// is given a quarter of a second.
			limit := 10 * time.Second
			if !tc.wakes {
				limit = 250 * time.Millisecond
			}
			woke, err := waitFor(t, w, limit)
			if woke != tc.wakes || err != nil {
				t.Fatalf("Wait woke %v (%v), want %v", woke, err, tc.wakes)
			}
		})
	}
}

// TestWatchArmedAgain: a watch armed again on the dir made anew tells
// the next deletion too, and Close ends a Wait under way.
func TestWatchArmedAgain(t *testing.T) {
	d := Dir(tree(t))
	w, err := NewWatch(d)
	mustDo(t, err)
	defer w.Close()
	for round := range 3 {
		mustDo(t, os.RemoveAll(string(d)))
		if woke, err := waitFor(t, w, 10*time.Second); !woke || err != nil {
			t.Fatalf("round %d: deletion not told (%v)", round, err)
		}
		if !d.Missing() {
			t.Fatalf("round %d: Missing is false after the deletion", round)
		}
		mustDo(t, d.Remake())
		mustDo(t, os.WriteFile(d.SocketLock(), nil, 0o600))
		mustDo(t, w.Arm())
		if d.Missing() {
			t.Fatalf("round %d: Missing after Remake", round)
		}
	}
	got := make(chan error, 1)
	go func() { got <- w.Wait() }()
	w.Close()
	select {
	case err := <-got:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("Wait after Close: %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end the Wait")
	}
}

func TestRemake(t *testing.T) {
	d := Dir(filepath.Join(t.TempDir(), "state"))
	mustDo(t, d.Remake())
	for _, p := range []string{string(d), d.Keepers(), d.Logs()} {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode() != os.ModeDir|0o700 {
			t.Errorf("%s: %v %v, want a dir 0700", p, fi, err)
		}
	}
	if err := Check(string(d)); err != nil {
		t.Errorf("the state dir made again is not trusted: %v", err)
	}
}

// TestWatchDirPinnedBySocket: the daemon's bound socket pins the state
// dir, whose own IN_DELETE_SELF then waits for the socket's close; the
// deletion is told all the same, with or without the socket's lock file.
func TestWatchDirPinnedBySocket(t *testing.T) {
	for _, withLock := range []bool{false, true} {
		d := Dir(filepath.Join(t.TempDir(), "state"))
		mustDo(t, os.Mkdir(string(d), 0o700))
		ln, err := net.Listen("unix", d.Socket())
		mustDo(t, err)
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		if withLock {
			mustDo(t, os.WriteFile(d.SocketLock(), nil, 0o600))
		}
		w, err := NewWatch(d)
		mustDo(t, err)
		mustDo(t, os.RemoveAll(string(d)))
		if woke, err := waitFor(t, w, 10*time.Second); !woke || err != nil {
			t.Errorf("with lock file %v: deletion not told (%v)", withLock, err)
		}
		w.Close()
		ln.Close()
	}
}
