package outlog

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/harness/testlog"
)

// record is the part of a JSON log record the tests look at.
type record struct {
	Time           time.Time
	Level, Msg     string
	Job            string
	RunID          string `json:"run_id"`
	Channel, Line  string
	LinesNotLogged int `json:"lines_not_logged"`
}

// sink is a JSON handler into a buffer whose writes can be held up, like
// a daemon's stderr that nobody reads.
type sink struct {
	testlog.Buffer
	gate chan struct{} // when non-nil, every write waits for it to close
}

func (s *sink) Write(p []byte) (int, error) {
	if s.gate != nil {
		<-s.gate
	}
	return s.Buffer.Write(p)
}

func (s *sink) records(t *testing.T) []record {
	t.Helper()
	var out []record
	for _, l := range s.Lines() {
		if l == "" {
			continue
		}
		var r record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, r)
	}
	return out
}

func newSink() (*sink, slog.Handler) {
	s := &sink{}
	return s, slog.NewJSONHandler(s, nil)
}

func start(l *Logger, job, runID string, logOutput bool) {
	l.Handle(run.Start{Job: job, RunID: runID, Started: time.Now(), LogOutput: logOutput})
}

func lines(l *Logger, job, runID string, from, to int) {
	for i := from; i < to; i++ {
		l.Handle(run.Output{Job: job, RunID: runID, Time: time.Now(), Stream: "stdout", Line: fmt.Sprintf("line %d", i)})
	}
}

// chunk hands lines from..to-1 over in one event, as a fast job's
// output arrives.
func chunk(l *Logger, job, runID string, from, to int) {
	var b strings.Builder
	for i := from; i < to; i++ {
		if i > from {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "line %d", i)
	}
	l.Handle(run.Output{Job: job, RunID: runID, Time: time.Now(), Stream: "stdout", Line: b.String()})
}

func finish(l *Logger, job, runID string) {
	l.Handle(run.End{Job: job, RunID: runID, Ended: time.Now()})
}

// settle lets the writer write everything queued, at the cap's pace.
func settle() {
	synctest.Wait()
	time.Sleep(time.Minute)
	synctest.Wait()
}

// check verifies that records hold the lines 0..total-1 of run in order,
// each either logged or counted by the marker that stands where it was
// dropped, and returns how many were logged.
func check(t *testing.T, recs []record, runID string, total int) (logged int) {
	t.Helper()
	next := 0
	for _, r := range recs {
		if r.RunID != runID {
			continue
		}
		switch {
		case r.Msg == "output":
			if want := fmt.Sprintf("line %d", next); r.Line != want || r.Channel != "stdout" || r.Level != "INFO" {
				t.Fatalf("record %+v, want %q on stdout", r, want)
			}
			next++
			logged++
		case strings.HasSuffix(r.Msg, " not logged"):
			if want := fmt.Sprintf("%d lines of %s %s not logged", r.LinesNotLogged, r.Job, runID); r.Msg != want || r.Level != "WARN" || r.LinesNotLogged <= 0 {
				t.Fatalf("marker %+v, want %q at WARN", r, want)
			}
			next += r.LinesNotLogged
		default:
			t.Fatalf("unexpected record %+v", r)
		}
	}
	if next != total {
		t.Fatalf("records account for %d lines of %s, want %d", next, runID, total)
	}
	return logged
}

func TestLinesUnderTheCapAreAllLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		l := New(h, WithRate(100, 50))
		defer l.Close()
		start(l, "job", "r1", true)
		at := time.Now()
		lines(l, "job", "r1", 0, 40)
		time.Sleep(time.Second)
		lines(l, "job", "r1", 40, 80)
		finish(l, "job", "r1")
		synctest.Wait()
		recs := s.records(t)
		if got := check(t, recs, "r1", 80); got != 80 {
			t.Errorf("logged %d lines, want all 80", got)
		}
		if !recs[0].Time.Equal(at) {
			t.Errorf("first record's time %v, want the line's %v", recs[0].Time, at)
		}
	})
}

// TestFloodNeverBlocksTheRun holds the log writer up (stderr nobody reads)
// while a run prints far more than the cap: Handle must return at once,
// and every line is either logged or counted by a marker at its place.
func TestFloodNeverBlocksTheRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		s.gate = make(chan struct{})
		l := New(h, WithRate(1000, 100))
		defer l.Close()
		start(l, "chatty", "r1", true)
		lines(l, "chatty", "r1", 0, 1)
		synctest.Wait()                 // the writer holds line 0, stuck writing it
		lines(l, "chatty", "r1", 1, 50) // returns, or the test hangs
		for i := 50; i < 100_000; i += 1000 {
			chunk(l, "chatty", "r1", i, min(i+1000, 100_000))
		}
		close(s.gate)
		finish(l, "chatty", "r1")
		settle()
		logged := check(t, s.records(t), "r1", 100_000)
		// The first line waits in the writer; the queue held 100.
		if logged != 101 {
			t.Errorf("logged %d lines, want the one in hand and the queue's 100", logged)
		}
	})
}

// TestRateCap prints steadily for ten (fake) seconds and checks the log
// gets no more than the cap allows.
func TestRateCap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		l := New(h, WithRate(100, 20))
		defer l.Close()
		start(l, "job", "r1", true)
		n := 0
		for range 1000 { // 10 s at 10 ms: 100,000 lines, 10 per step
			lines(l, "job", "r1", n, n+10)
			n += 10
			time.Sleep(10 * time.Millisecond)
		}
		finish(l, "job", "r1")
		settle()
		logged := check(t, s.records(t), "r1", n)
		// 10 s at 100/s, a burst of 20, a queue of 20 still draining.
		if logged > 100*10+20+20+100 || logged < 900 {
			t.Errorf("logged %d lines in 10 s, want about 1000 (cap 100/s)", logged)
		}
	})
}

func TestLongLinesCountPerKiB(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		s.gate = make(chan struct{})
		l := New(h, WithRate(10, 10))
		defer l.Close()
		start(l, "job", "r1", true)
		long := strings.Repeat("x", 3*unitBytes) // 4 units
		for i := range 10 {
			l.Handle(run.Output{Job: "job", RunID: "r1", Time: time.Now(), Stream: "stderr", Line: long})
			if i == 0 {
				synctest.Wait() // the writer holds it, stuck writing
			}
		}
		close(s.gate)
		finish(l, "job", "r1")
		settle()
		logged := 0
		for _, r := range s.records(t) {
			if r.Msg == "output" {
				logged++
			}
		}
		// One in the writer's hands, then 2 of 4 units fit in the queue of 10.
		if logged != 3 {
			t.Errorf("logged %d lines of 3 KiB, want 3", logged)
		}
	})
}

func TestLogOutputFalseLogsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		l := New(h)
		defer l.Close()
		start(l, "quiet", "r1", false)
		lines(l, "quiet", "r1", 0, 10)
		finish(l, "quiet", "r1")
		lines(l, "ghost", "never-started", 0, 10)
		_ = l.Close()
		if recs := s.records(t); len(recs) != 0 {
			t.Errorf("records %+v, want none", recs)
		}
	})
}

// TestCloseDrainsWithoutWaiting: at shutdown, what is queued is written
// at once, and a run still open gets its marker.
func TestCloseDrainsWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := newSink()
		l := New(h, WithRate(1, 1000)) // one line a second once the burst is spent
		defer l.Close()
		start(l, "job", "r1", true)
		lines(l, "job", "r1", 0, 1000) // spends the burst
		synctest.Wait()
		lines(l, "job", "r1", 1000, 1001)
		synctest.Wait()                   // the writer waits a second for a token
		lines(l, "job", "r1", 1001, 3001) // 1000 queued, 1000 dropped
		began := time.Now()
		_ = l.Close()
		if took := time.Since(began); took > 0 {
			t.Errorf("Close waited %v for the rate cap", took)
		}
		if logged := check(t, s.records(t), "r1", 3001); logged != 2001 {
			t.Errorf("logged %d lines, want 2001", logged)
		}
		lines(l, "job", "r1", 3001, 3010) // after Close: ignored, no panic
	})
}

// TestTextFormat checks the marker reads as the issue asks in text logs.
func TestTextFormat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &sink{gate: make(chan struct{})}
		l := New(slog.NewTextHandler(s, nil), WithRate(1, 1))
		defer l.Close()
		start(l, "job", "r1", true)
		lines(l, "job", "r1", 0, 1)
		synctest.Wait()             // the writer holds line 0, stuck writing it
		lines(l, "job", "r1", 1, 5) // line 1 queued, 3 dropped
		close(s.gate)
		finish(l, "job", "r1")
		_ = l.Close()
		if got := s.String(); !strings.Contains(got, `msg="3 lines of job r1 not logged"`) {
			t.Errorf("text log lacks the marker:\n%s", got)
		}
	})
}
