package testlog

import (
	"testing"
	"time"
)

// pollEvery is how often Poll asks: often enough that a test waits little
// past the moment, seldom enough that the asking does not load the machine.
const pollEvery = 10 * time.Millisecond

// Poll asks cond about every 10 ms until it holds, for at most within,
// and says whether it held: for tests that wait on a real process, file
// or server with no notification to wait on (no clock to fake).
func Poll(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); !cond(); time.Sleep(pollEvery) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// Eventually is Poll that fails the test, naming what it waited for, when
// cond did not hold within the bound.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(within, cond) {
		t.Fatalf("%s: not within %v", what, within)
	}
}
