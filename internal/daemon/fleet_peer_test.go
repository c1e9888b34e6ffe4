package daemon

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"cronvisor/internal/base/clock"
	"cronvisor/internal/base/run"
	"cronvisor/runner/ending"
)

// fakePeerStore answers the peer's calls from a script, by beat.
type fakePeerStore struct {
	mu      sync.Mutex
	beats   int
	closes  int
	stopped int
	offset  func(beat int) (time.Duration, error)
	// server is the server's clock at a beat (nil: the local clock).
	server func(beat int) time.Time
	lost   map[int][]run.Record // returned by the CloseLostRuns after that beat
	since  map[int]time.Time    // the watch each closing after that beat was given
}

func (f *fakePeerStore) Beat(context.Context, string, int, time.Time) (time.Duration, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.beats++
	at := time.Now()
	if f.server != nil {
		at = f.server(f.beats)
	}
	offset, err := f.offset(f.beats)
	return offset, at, err
}

func (f *fakePeerStore) Watched(since time.Time) ending.LostCloser {
	return fakeWatch{f, since}
}

type fakeWatch struct {
	f     *fakePeerStore
	since time.Time
}

func (w fakeWatch) CloseLostRuns(context.Context) ([]run.Record, error) {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closes++
	if f.since == nil {
		f.since = map[int]time.Time{}
	}
	f.since[f.beats] = w.since
	return f.lost[f.beats], nil
}

func (f *fakePeerStore) Stopped(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped++
	return nil
}

func (f *fakePeerStore) counts() (int, int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.beats, f.closes, f.stopped
}

// syncBuf is a log buffer the peer's goroutine writes while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

func TestFleetPeerBeatsClosesAndStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := time.Now()
		lost := run.Record{Job: "j", RunID: "r1", Host: "b", Outcome: run.Interrupted, ScheduledAt: started,
			StartedAt: started, EndedAt: started.Add(time.Second), Reason: "host lost: x", Attempt: 2}
		store := &fakePeerStore{
			offset: func(beat int) (time.Duration, error) {
				switch {
				case beat == 3:
					return 0, errors.New("server down")
				case beat < 70:
					return 3 * time.Second, nil // off by more than a second throughout
				}
				return 0, nil
			},
			lost: map[int][]run.Record{2: {lost}, 3: {lost}}, // 3's beat fails: not closed then
		}
		logs := &syncBuf{}
		var mu sync.Mutex
		var events []run.Event
		emit := func(ev run.Event) { mu.Lock(); events = append(events, ev); mu.Unlock() }
		stop := startFleetPeer(store, ending.New(emit), slog.New(slog.NewTextHandler(logs, nil)), clock.Real{}, "v1")
		synctest.Wait()
		if b, c, _ := store.counts(); b != 1 || c != 1 {
			t.Fatalf("at start: %d beats, %d closes; want one of each at once", b, c)
		}
		time.Sleep(80 * time.Second) // in the bubble: 80 more beats, one a second
		synctest.Wait()
		stop()
		beats, closes, stopped := store.counts()
		if beats != 81 || closes != 80 || stopped != 1 {
			t.Errorf("%d beats, %d closes, %d stopped; want 81, 80 (not after the failed beat), 1", beats, closes, stopped)
		}
		mu.Lock()
		defer mu.Unlock()
		want := run.HostLost{Job: "j", RunID: "r1", Host: "b", Slot: started, Started: started,
			Ended: started.Add(time.Second), Time: started.Add(time.Second), Reason: "host lost: x", Attempt: 2}
		if len(events) != 1 || events[0] != want {
			t.Errorf("events %+v, want one %+v", events, want)
		}
		// Beats 1..69 are off by 3 s: warned at the first and a minute later.
		if n := logs.count("clock is off"); n != 2 {
			t.Errorf("%d clock warnings over 69 s off, want 2 (start-up, then a minute later)", n)
		}
		if n := logs.count("heartbeat failed"); n != 1 {
			t.Errorf("%d heartbeat failures logged, want 1", n)
		}
	})
}

// The peer counts another host's silence only from the start of its own
// unbroken run of beats: from its first beat, and again from the first
// beat after a gap (a failed beat, or beats further apart by the
// server's clock than fleet.UpWithin: a server restart, a frozen peer).
func TestFleetPeerWatchesFromItsOwnSteadyBeating(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		down := func(beat int) bool { return beat >= 5 && beat <= 8 } // the server restarting
		store := &fakePeerStore{
			offset: func(beat int) (time.Duration, error) {
				if down(beat) {
					return 0, errors.New("connection refused")
				}
				return 0, nil
			},
			server: func(beat int) time.Time {
				at := t0.Add(time.Duration(beat) * time.Second)
				if beat >= 12 {
					at = at.Add(10 * time.Second) // the server's clock: this peer froze 10 s before beat 12
				}
				return at
			},
		}
		logs := &syncBuf{}
		stop := startFleetPeer(store, ending.New(nil), slog.New(slog.NewTextHandler(logs, nil)), clock.Real{}, "v1")
		time.Sleep(14*time.Second + time.Second/2)
		synctest.Wait()
		stop()
		at := func(beat int) time.Time { return store.server(beat) }
		want := map[int]time.Time{1: at(1), 2: at(1), 4: at(1), 9: at(9), 10: at(9), 11: at(9), 12: at(12), 15: at(12)}
		store.mu.Lock()
		defer store.mu.Unlock()
		for beat, since := range want {
			if got, ok := store.since[beat]; !ok || !got.Equal(since) {
				t.Errorf("closing after beat %d watched since %v (%v), want since %v", beat, got.Sub(t0), ok, since.Sub(t0))
			}
		}
		for beat := range store.since {
			if down(beat) {
				t.Errorf("closed after beat %d, which failed", beat)
			}
		}
		if n := logs.count("heartbeat resumed after a gap"); n != 2 {
			t.Errorf("%d logs of a resumed heartbeat, want 2 (after the outage, after the freeze)", n)
		}
	})
}
