package runner

import (
	"slices"
	"testing"
)

// TestParallelismFollowsTheRunsInFlight checks the processors the loop
// asks for: one for a lone fire, every one from busyRuns runs in flight,
// one again below half of it, every one back when the loop ends.
func TestParallelismFollowsTheRunsInFlight(t *testing.T) {
	var told []int
	p := parallelism{set: func(n int) { told = append(told, n) }, most: 4}
	steps := []struct {
		inFlight int64
		want     []int
	}{
		{0, []int{1}},                      // the loop starts: one
		{1, []int{1}},                      // a lone fire: unchanged, nothing said
		{busyRuns - 1, []int{1}},           // below the mark
		{busyRuns, []int{1, 4}},            // a burst: every processor
		{busyRuns/2 + 1, []int{1, 4}},      // draining, above half: kept
		{busyRuns/2 - 1, []int{1, 4, 1}},   // below half: one again
		{busyRuns + 10, []int{1, 4, 1, 4}}, // another burst
		{0, []int{1, 4, 1, 4, 1}},          // idle
	}
	for i, s := range steps {
		p.inFlight.Store(s.inFlight)
		p.adjust()
		if !slices.Equal(told, s.want) {
			t.Fatalf("step %d (%d in flight): told %v, want %v", i, s.inFlight, told, s.want)
		}
	}
	p.restore()
	if want := []int{1, 4, 1, 4, 1, 4}; !slices.Equal(told, want) {
		t.Errorf("after restore: told %v, want %v", told, want)
	}
}

// TestParallelismLeftAloneOnOneProcessor checks that a process allowed one
// processor, or none set, is never told anything.
func TestParallelismLeftAloneOnOneProcessor(t *testing.T) {
	var told []int
	for _, p := range []*parallelism{{set: func(n int) { told = append(told, n) }, most: 1}, {most: 8}} {
		p.inFlight.Store(busyRuns * 2)
		p.adjust()
		p.restore()
	}
	if len(told) != 0 {
		t.Errorf("told %v, want nothing", told)
	}
}
