package durations

import (
	"fmt"
	"time"
)

// The suggested timeout: three times the p99, and at least a minute
// above it, so that a run as slow as the slowest in a hundred has room,
// and a hang ends within a few of its usual lengths.
const (
	SuggestFactor = 3
	SuggestMargin = time.Minute
	// FarAbove: a timeout this many times the suggested one lets a hang
	// run long enough to say so.
	FarAbove = 10
)

// SuggestTimeout is a timeout for a job whose runs have the figures s,
// rounded up to a readable step, and its reason; ok is false when s has
// too few runs.
func SuggestTimeout(s Stats) (timeout time.Duration, reason string, ok bool) {
	if !s.Enough() {
		return 0, fmt.Sprintf("%d successful runs in the window; %d are needed", s.Runs, MinSamples), false
	}
	timeout = roundUp(max(SuggestFactor*s.P99, s.P99+SuggestMargin))
	return timeout, fmt.Sprintf("p99 of the last %d runs is %s (max %s); %d × p99, at least p99 + %s, rounded up",
		s.Runs, Round(s.P99), Round(s.Max), SuggestFactor, SuggestMargin), true
}

// roundUp rounds d up to 10 s below 10 minutes, to the minute below two
// hours, and to 10 minutes above.
func roundUp(d time.Duration) time.Duration {
	step := 10 * time.Minute
	switch {
	case d < 10*time.Minute:
		step = 10 * time.Second
	case d < 2*time.Hour:
		step = time.Minute
	}
	return (d + step - 1) / step * step
}

// TimeoutWarning judges a job's timeout (0: none) against the figures of
// its runs: a timeout below the p99 kills runs that would have ended ok;
// one more than FarAbove times the suggested timeout lets a hang run that
// long. It returns "" when there is nothing to say or too few runs.
func TimeoutWarning(timeout time.Duration, s Stats) string {
	suggest, _, ok := SuggestTimeout(s)
	if !ok || timeout <= 0 {
		return ""
	}
	switch {
	case timeout < s.P99:
		return fmt.Sprintf("timeout %s is below the p99 of the last %d runs (%s): runs that would end ok are killed; suggested timeout %s",
			timeout, s.Runs, Round(s.P99), suggest)
	case timeout > FarAbove*suggest:
		return fmt.Sprintf("timeout %s is far above the p99 of the last %d runs (%s): a hang runs %s before it is ended; suggested timeout %s",
			timeout, s.Runs, Round(s.P99), timeout, suggest)
	}
	return ""
}
