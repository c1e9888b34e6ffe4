package runner

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestTimerSettleSleepsItsStretch checks the timerfd's sleep: never short,
// and back within a bound a loaded machine keeps, for the stretches the
// loop settles (up to wakeLead); its descriptor is gone once closed.
func TestTimerSettleSleepsItsStretch(t *testing.T) {
	ts, err := openTimerSettle()
	if err != nil {
		t.Fatal(err)
	}
	fd := ts.fd
	for _, d := range []time.Duration{0, 50 * time.Microsecond, wakeLead / 2, wakeLead} {
		start := time.Now()
		ts.sleep(d)
		if got := time.Since(start); got < d || got > d+50*time.Millisecond {
			t.Errorf("sleep(%v) took %v", d, got)
		}
	}
	ts.close()
	if target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd)); err == nil && target == "anon_inode:[timerfd]" {
		t.Errorf("fd %d is still the timer after close", fd)
	}
}
