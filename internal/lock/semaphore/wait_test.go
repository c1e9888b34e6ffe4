package semaphore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"cronvisor/internal/harness/locktest"
	"cronvisor/internal/harness/testlog"
	"cronvisor/internal/lock/redis"
)

type waited struct {
	job string
	h   *Held
	err error
}

// goWait waits in a goroutine of the test's own for job's slot; the
// result comes on the channel.
func goWait(ctx context.Context, t *testing.T, s Semaphores, job string, until time.Time) <-chan waited {
	ch := make(chan waited, 1)
	go func() {
		h, err := s.Wait(ctx, req(job, "db", 1), until)
		ch <- waited{job, h, err}
	}()
	return ch
}

// waiters is List's waiters of db, by job.
func waiters(ctx context.Context, t *testing.T, s Semaphores) []string {
	t.Helper()
	var out []string
	for _, w := range listed(ctx, t, s, "db").Waiters {
		if w.Resource == "db" {
			out = append(out, w.Job)
		}
	}
	return out
}

func recv(ctx context.Context, t *testing.T, ch <-chan waited) waited {
	t.Helper()
	select {
	case w := <-ch:
		return w
	case <-ctx.Done():
		t.Fatal("a waiter never returned")
		return waited{}
	}
}

// A waiter takes the slot another supervisor frees, and is listed while
// it waits; a waiter whose time runs out gets the FullError with Waited.
func TestWaitTakesAFreedSlotAndGivesUpAtUntil(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 20*time.Second)
		a, b := open(map[string]int{"db": 1}), open(map[string]int{"db": 1})
		h := mustTake(ctx, t, b, req("holder", "db", 1))

		start := time.Now()
		_, err := a.Wait(ctx, req("late", "db", 1), start.Add(300*time.Millisecond))
		full := mustBeFull(t, err, "db", "holder")
		if full.Waited < 300*time.Millisecond || time.Since(start) > 3*time.Second {
			t.Errorf("gave up after %s (Waited %s), want at about 300ms", time.Since(start), full.Waited)
		}

		ch := goWait(ctx, t, a, "patient", time.Now().Add(15*time.Second))
		locktest.WaitUntil(ctx, t, "the waiter is listed", func() bool { return slices.Equal(waiters(ctx, t, a), []string{"patient"}) })
		if err := b.Release(h); err != nil {
			t.Fatal(err)
		}
		freed := time.Now()
		w := recv(ctx, t, ch)
		if w.err != nil || !slices.Equal(w.h.Slots, []string{"db/0"}) {
			t.Fatalf("Wait = %v, %v; want db/0", w.h, w.err)
		}
		defer a.Release(w.h)
		if d := time.Since(freed); d > 2*time.Second {
			t.Errorf("took the freed slot %s after its release", d)
		}
		if got := waiters(ctx, t, a); len(got) != 0 {
			t.Errorf("waiters %v after the wait", got)
		}
	})
}

// Two waiters of one process take the slot in the order they began to
// wait, and a fire that does not wait does not pass them.
func TestWaitersTakeInTurn(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 20*time.Second)
		a, b := open(map[string]int{"db": 1}), open(map[string]int{"db": 1})
		h := mustTake(ctx, t, b, req("holder", "db", 1))
		until := time.Now().Add(15 * time.Second)
		first := goWait(ctx, t, a, "first", until)
		locktest.WaitUntil(ctx, t, "first waits", func() bool { return len(waiters(ctx, t, a)) == 1 })
		second := goWait(ctx, t, a, "second", until)
		locktest.WaitUntil(ctx, t, "second waits", func() bool {
			return slices.Equal(waiters(ctx, t, a), []string{"first", "second"})
		})
		if err := b.Release(h); err != nil {
			t.Fatal(err)
		}
		w := recv(ctx, t, first)
		if w.err != nil {
			t.Fatalf("first: %v", w.err)
		}
		if _, err := a.Take(ctx, req("newcomer", "db", 1)); !errors.Is(err, ErrFull) {
			t.Errorf("a newcomer passed the waiter: %v", err)
		}
		select {
		case w2 := <-second:
			t.Fatalf("second took a slot held by first: %v, %v", w2.h, w2.err)
		case <-time.After(200 * time.Millisecond):
		}
		if err := a.Release(w.h); err != nil {
			t.Fatal(err)
		}
		w2 := recv(ctx, t, second)
		if w2.err != nil {
			t.Fatalf("second: %v", w2.err)
		}
		_ = a.Release(w2.h)
	})
}

// A cancelled context ends a wait at once, and leaves the queue (the
// list of every host within the server's end of a closed session).
func TestWaitHonoursItsContext(t *testing.T) {
	eachBackend(t, func(t *testing.T, open func(map[string]int) Semaphores) {
		ctx := locktest.Context(t, 20*time.Second)
		a := open(map[string]int{"db": 1})
		mustTake(ctx, t, a, req("holder", "db", 1))
		wctx, cancel := context.WithCancel(ctx)
		ch := goWait(wctx, t, a, "waiter", time.Now().Add(15*time.Second))
		locktest.WaitUntil(ctx, t, "the waiter is listed", func() bool { return len(waiters(ctx, t, a)) == 1 })
		cancel()
		if w := recv(ctx, t, ch); !errors.Is(w.err, context.Canceled) {
			t.Fatalf("Wait = %v, want context.Canceled", w.err)
		}
		// A cancel that lands in the announcement's acquire closes its
		// session, whose lock the server frees a moment after.
		testlog.Eventually(t, 3*time.Second, "the waiter gone from the list after the cancel", func() bool {
			return len(waiters(ctx, t, a)) == 0
		})
	})
}

// A fire waiting on one host is listed by every host sharing the
// backend (Redis, MySQL, PostgreSQL: the waits' namespace), with when it
// gives up, as long as it waits and no longer. The file backend's state
// dir is one host's: its waiters are its own (the tests above).
func TestWaitersSeenOnEveryHost(t *testing.T) {
	for _, be := range backendsUnderTest() {
		if be.name == "file" {
			continue
		}
		t.Run(be.name, func(t *testing.T) {
			ctx := locktest.Context(t, 20*time.Second)
			open := opener(t, be.b, be.settings(t))
			here, there := open(map[string]int{"db": 1}), open(map[string]int{"db": 1})
			mustTake(ctx, t, there, req("holder", "db", 1))
			until := time.Now().Add(15 * time.Second).Truncate(time.Millisecond)
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			ch := goWait(wctx, t, here, "patient", until)
			var seen Resource
			locktest.WaitUntil(ctx, t, "the other host lists the waiter", func() bool {
				seen = listed(ctx, t, there, "db")
				return len(seen.Waiters) == 1
			})
			w := seen.Waiters[0]
			if w.Job != "patient" || w.RunID != "run-patient" || w.Resource != "db" || !w.Until.Equal(until) || w.Since.IsZero() {
				t.Errorf("the other host's waiter %+v, want patient's run giving up at %s", w, until)
			}
			if got := waiters(ctx, t, here); !slices.Equal(got, []string{"patient"}) {
				t.Errorf("the waiting host lists %v, want patient once", got)
			}
			cancel()
			recv(ctx, t, ch)
			if got := waiters(ctx, t, there); len(got) != 0 {
				t.Errorf("the other host lists %v once the wait ended", got)
			}
		})
	}
}

// A process announces at most announcedHere waiters at once (on SQL
// each holds a connection): the rest wait all the same, seen by their
// own host only; an announcement ended makes room for the next.
func TestAnnouncementsBoundedPerProcess(t *testing.T) {
	ctx := locktest.Context(t, 30*time.Second)
	open := opener(t, redis.Redis, redisSettings(t))
	here, there := open(map[string]int{"db": 1}), open(map[string]int{"db": 1})
	mustTake(ctx, t, there, req("holder", "db", 1))
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := announcedHere + 2
	var chs []<-chan waited
	for i := range n {
		chs = append(chs, goWait(wctx, t, here, fmt.Sprintf("w%02d", i), time.Now().Add(20*time.Second)))
	}
	locktest.WaitUntil(ctx, t, "every fire waits here", func() bool { return len(waiters(ctx, t, here)) == n })
	locktest.WaitUntil(ctx, t, "the other host lists the announced ones", func() bool {
		return len(waiters(ctx, t, there)) == announcedHere
	})
	cancel()
	for _, ch := range chs {
		recv(ctx, t, ch)
	}
	if got := waiters(ctx, t, there); len(got) != 0 {
		t.Errorf("the other host lists %v once every wait ended", got)
	}
	if a := here.(*sems).announced.Load(); a != 0 {
		t.Errorf("%d announcements counted alive after the waits", a)
	}
}
