package proc

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// handMany hands n runs over deferred to k's keeper process, every so
// often (a daemon hands over at most a few thousand runs a second), and
// keeps them all in flight; each is nil where the hand-over fell back to
// the eager one. The returned stop closes them.
func handMany(t *testing.T, k *inProcessKeeper, n int, every time.Duration) ([]*deferredRun, func()) {
	t.Helper()
	dir := filepath.Dir(k.end)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	runs := make([]*deferredRun, n)
	for i := range runs {
		_, runs[i] = k.pool.handDeferred(dir, []string{KeeperName, "-tag", "test"}, []*os.File{null})
		time.Sleep(every)
	}
	return runs, func() {
		for _, r := range runs {
			if r != nil {
				r.close()
			}
		}
		null.Close()
		k.srv.sweep(false)
	}
}

// refusedAt is the index of the first run not handed over deferred, -1
// if none.
func refusedAt(runs []*deferredRun) int {
	for i, r := range runs {
		if r == nil {
			return i
		}
	}
	return -1
}

// TestManyRunsInFlightStayDeferred: with far more runs in flight than
// the mailbox holds mails, a keeper that sweeps when asked keeps taking
// every hand-over deferred. The asks once came only every "runs in
// flight" mails, which past some 270 runs in flight was more than the
// mailbox holds: from then on every run was handed over eagerly, waking
// the keeper four times (nearly all of them at 1,000 runs a second).
func TestManyRunsInFlightStayDeferred(t *testing.T) {
	t.Parallel()
	k := newInProcessKeeper(t)
	stopAsks := k.sweepWhenAsked(t)
	runs, stop := handMany(t, k, 1200, 500*time.Microsecond)
	stopAsks()
	defer stop()
	if i := refusedAt(runs); i >= 0 {
		t.Fatalf("run %d of %d, with %d in flight, was not handed over deferred", i+1, len(runs), i)
	}
}

// TestFullMailboxAsksForASweep: a keeper that has not swept yet refuses
// a mail once its mailbox is full (that run is handed over eagerly), and
// the refusal itself asks it to sweep; once it has, hand-overs are
// deferred again.
func TestFullMailboxAsksForASweep(t *testing.T) {
	t.Parallel()
	k := newInProcessKeeper(t)
	kp := k.pool.procs[filepath.Dir(k.end)]
	kp.deferral.asked.Store(1 << 40) // no ask for the mails taken: only a refusal asks
	runs, stop := handMany(t, k, 600, 0)
	defer stop()
	full := refusedAt(runs)
	if full < 0 {
		t.Fatal("600 mails with no sweep were all taken: the mailbox never filled")
	}
	if !k.asked(t) {
		t.Fatalf("the mailbox refused mail %d, and no sweep was asked for", full+1)
	}
	k.srv.sweep(false)
	more, stopMore := handMany(t, k, 10, 0)
	defer stopMore()
	if i := refusedAt(more); i >= 0 {
		t.Errorf("after the sweep, run %d was still refused", i+1)
	}
}

// sweepWhenAsked serves the keeper's control socket as a keeper does its
// asks: a sweep for each "sweep". The returned stop waits for the
// server to return.
func (k *inProcessKeeper) sweepWhenAsked(t *testing.T) (stop func()) {
	t.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		buf := make([]byte, 64)
		for {
			select {
			case <-done:
				return
			default:
			}
			if pollNow(k.ctl, unix.POLLIN) == 0 {
				time.Sleep(100 * time.Microsecond)
				continue
			}
			if n, _, _, _, err := unix.Recvmsg(k.ctl, buf, nil, unix.MSG_DONTWAIT); err == nil && string(buf[:n]) == msgSweep {
				k.srv.sweep(false)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// asked reports whether a "sweep" waits on the keeper's control socket.
func (k *inProcessKeeper) asked(t *testing.T) bool {
	t.Helper()
	buf := make([]byte, 64)
	for {
		n, _, _, _, err := unix.Recvmsg(k.ctl, buf, nil, unix.MSG_DONTWAIT)
		if err != nil {
			return false
		}
		if string(buf[:n]) == msgSweep {
			return true
		}
	}
}
