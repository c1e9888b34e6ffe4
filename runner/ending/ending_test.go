package ending

import (
	"context"
	"errors"
	"testing"
	"time"

	"cronvisor/internal/base/run"
)

// closeOnce is a Writer whose run can be ended once, as history's
// conditional update ends an open row once.
type closeOnce struct {
	ended map[string]bool
	err   error
}

func (w *closeOnce) WriteEnd(_ context.Context, e run.End) (bool, error) {
	if w.err != nil {
		return false, w.err
	}
	if w.ended[e.RunID] {
		return false, nil
	}
	w.ended[e.RunID] = true
	return true, nil
}

type told struct{ events []run.Event }

func (t *told) emit(ev run.Event) { t.events = append(t.events, ev) }

// TestAnEndIsToldOnceWhoeverWritesIt: two witnesses of one run's end (its
// keeper's end read by two recoverers, say) write it; the observers hear
// of it once, from the write that ended it. A write that failed tells
// nobody: the end is told when a later write records it.
func TestAnEndIsToldOnceWhoeverWritesIt(t *testing.T) {
	var obs told
	p := New(obs.emit)
	w := &closeOnce{ended: map[string]bool{}}
	e := run.End{Job: "a", RunID: "r1", Outcome: run.Timeout, Ended: time.Unix(100, 0)}
	failing := &closeOnce{err: errors.New("store down")}
	if closed, err := p.End(context.Background(), failing, e); closed || err == nil {
		t.Fatalf("failing write = %v, %v; want not closed, an error", closed, err)
	}
	for i, want := range []bool{true, false} {
		closed, err := p.End(context.Background(), w, e)
		if closed != want || err != nil {
			t.Fatalf("write %d = %v, %v; want %v, nil", i+1, closed, err, want)
		}
	}
	if len(obs.events) != 1 || obs.events[0].(run.End).Outcome != run.Timeout {
		t.Fatalf("told %v; want the timeout once", obs.events)
	}
}

type skips struct{ n int }

func (s *skips) WriteSkip(run.Skip) { s.n++ }

type lost []run.Record

func (l lost) CloseLostRuns(context.Context) ([]run.Record, error) { return l, nil }

// TestSkipsAndLostRunsAreWrittenThenTold: a skip is written, then told; a
// peer's closing of lost hosts' runs tells each run it closed as a
// HostLost, attempt 1 at least.
func TestSkipsAndLostRunsAreWrittenThenTold(t *testing.T) {
	var obs told
	p := New(obs.emit)
	var w skips
	p.Skip(&w, run.Skip{Job: "a", RunID: "s1", Class: run.ClassMissed})
	now := time.Unix(200, 0)
	got, err := p.CloseLost(context.Background(), lost{{Job: "b", RunID: "r9", Host: "h2", Reason: "host lost: x"}}, now)
	if err != nil || len(got) != 1 {
		t.Fatalf("CloseLost = %v, %v", got, err)
	}
	if w.n != 1 || len(obs.events) != 2 {
		t.Fatalf("%d skips written, %d events told; want 1 and 2", w.n, len(obs.events))
	}
	hl, ok := obs.events[1].(run.HostLost)
	if !ok || hl.RunID != "r9" || hl.Host != "h2" || hl.Attempt != 1 || !hl.Time.Equal(now) {
		t.Fatalf("told %+v; want r9 of h2 lost, attempt 1, at %v", obs.events[1], now)
	}
	New(nil).Skip(&w, run.Skip{Job: "a"}) // no observers: written all the same
	if w.n != 2 {
		t.Fatalf("%d skips written; want 2", w.n)
	}
}

// judgeAll is a Judge that learns every end it is told and finds each
// ok one fast.
type judgeAll struct{ learned []string }

func (j *judgeAll) Ended(_ context.Context, e run.End) (run.Fast, bool) {
	j.learned = append(j.learned, e.RunID)
	return run.Fast{Job: e.Job, RunID: e.RunID}, e.Outcome == run.OK
}

// TestTheJudgeLearnsEachEndOnce: the judge hears an end only from the
// write that ended it, and a fast run is told right after its end.
func TestTheJudgeLearnsEachEndOnce(t *testing.T) {
	var obs told
	j := &judgeAll{}
	p := New(obs.emit, WithJudge(j))
	w := &closeOnce{ended: map[string]bool{}}
	ok := run.End{Job: "a", RunID: "r1", Outcome: run.OK}
	failed := run.End{Job: "a", RunID: "r2", Outcome: run.Failed}
	for _, e := range []run.End{ok, ok, failed} {
		if _, err := p.End(context.Background(), w, e); err != nil {
			t.Fatal(err)
		}
	}
	if len(j.learned) != 2 || len(obs.events) != 3 {
		t.Fatalf("judge learned %v; told %v", j.learned, obs.events)
	}
	if _, isEnd := obs.events[0].(run.End); !isEnd {
		t.Errorf("first told %T, want the end", obs.events[0])
	}
	if f, isFast := obs.events[1].(run.Fast); !isFast || f.RunID != "r1" {
		t.Errorf("second told %+v, want r1's run.Fast", obs.events[1])
	}
}
