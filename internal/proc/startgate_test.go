package proc

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pipesOpen counts this process's pipe descriptors.
func pipesOpen(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, "pipe:") {
			n++
		}
	}
	return n
}

// TestFiresQueuedAtTheForkHoldNoPipes: while a fork holds every other
// back (os/exec's ForkLock, held here for reading), only the runs let
// through the start gate have made their output pipes; the rest wait
// before making any. Each fork copies every descriptor this process
// holds, so fires queued with theirs made every fork cost more.
// Not parallel: it holds up every fork of the test process.
func TestFiresQueuedAtTheForkHoldNoPipes(t *testing.T) {
	const runs = 16
	before := pipesOpen(t)
	syscall.ForkLock.RLock()
	held := true
	defer func() {
		if held {
			syscall.ForkLock.RUnlock()
		}
	}()
	var wg sync.WaitGroup
	results := make([]Result, runs)
	for i := range runs {
		spec := testSpec(t, "exit 0")
		wg.Go(func() { results[i] = Run(within(t, 20*time.Second), spec) })
	}
	// Each run let through makes its pipes and waits at the fork; give
	// the others time to do the same, as they did before the gate.
	time.Sleep(300 * time.Millisecond)
	made := pipesOpen(t) - before
	syscall.ForkLock.RUnlock()
	held = false
	wg.Wait()
	for i, res := range results {
		if res.Outcome != Exited || res.ExitCode != 0 {
			t.Errorf("run %d ended %+v, want exit 0", i, res)
		}
	}
	// Two pipes a run (stdout, stderr), two descriptors each.
	if limit := startsAtOnce * 4; made > limit {
		t.Errorf("%d pipe descriptors were open while %d runs waited for the fork, want at most %d (%d runs through the gate)",
			made, runs, limit, startsAtOnce)
	}
}
