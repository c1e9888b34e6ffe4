package testlog

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// TestPollWaitsForTheCondition: a condition that comes true on its third
// asking is seen, in about two polls; one that never does is given up on
// after the bound and not before.
func TestPollWaitsForTheCondition(t *testing.T) {
	var asked atomic.Int32
	if !Poll(time.Second, func() bool { return asked.Add(1) >= 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	if n := asked.Load(); n != 3 {
		t.Errorf("cond asked %d times, want 3", n)
	}
	start := time.Now()
	if Poll(50*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond || took > time.Second {
		t.Errorf("Poll gave up after %v, want about 50ms", took)
	}
}

// fatalRecorder is a testing.TB whose Fatalf records instead of
// stopping the test.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) { r.msg = fmt.Sprintf(format, args...) }

// TestEventuallyFailsNamingWhat: Eventually fails the test with what it
// waited for, and only when the condition did not come.
func TestEventuallyFailsNamingWhat(t *testing.T) {
	r := &fatalRecorder{TB: t}
	Eventually(r, time.Second, "the file", func() bool { return true })
	if r.msg != "" {
		t.Errorf("Eventually failed a condition that held: %q", r.msg)
	}
	Eventually(r, 20*time.Millisecond, "the file", func() bool { return false })
	if want := "the file: not within 20ms"; r.msg != want {
		t.Errorf("Eventually's failure = %q, want %q", r.msg, want)
	}
}
