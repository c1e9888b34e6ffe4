package runner

import (
	"context"
	"testing"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
)

// TestAwakeTurnsFalseWhenTheLoopStalls: a loop that has not woken within
// its longest sleep (here: it is not given the chance, the instant asked
// about is past it) is reported stuck; one that just woke is alive.
func TestAwakeTurnsFalseWhenTheLoopStalls(t *testing.T) {
	fc := clock.NewFake(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := NewScheduler(nil, fc, func(run.Event) {}, WithMaxSleep(30*time.Second))
	if s.Awake(fc.Now(), 0) {
		t.Fatal("Awake before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx, nil); close(done) }()
	defer func() { cancel(); <-done }()
	for fc.Timers() == 0 { // the loop has woken once and sleeps
		<-fc.TimerChanged()
	}
	if !s.Awake(fc.Now().Add(29*time.Second), 0) {
		t.Error("not Awake within its longest sleep")
	}
	if s.Awake(fc.Now().Add(31*time.Second), 0) {
		t.Error("Awake past its longest sleep without a wake-up")
	}
	fc.Advance(30 * time.Second) // the loop's timer: it wakes again
	for !s.Awake(fc.Now(), 0) {
		<-fc.TimerChanged()
	}
}
