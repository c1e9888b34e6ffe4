package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// manualTimers holds the functions a Limiter scheduled, for the test to
// run when it says the interval is over.
type manualTimers struct{ due []func() }

func (m *manualTimers) after(_ time.Duration, f func()) func() bool {
	m.due = append(m.due, f)
	return func() bool { return true }
}

func (m *manualTimers) fire() {
	due := m.due
	m.due = nil
	for _, f := range due {
		f()
	}
}

func newTest() (*Limiter, *manualTimers, *bytes.Buffer) {
	var buf bytes.Buffer
	l := New(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "since" {
			return slog.Attr{}
		}
		return a
	}})), time.Minute)
	m := &manualTimers{}
	l.after = m.after
	return l, m, &buf
}

func TestRateLogOncePerKeyPerMinuteWithACount(t *testing.T) {
	l, m, buf := newTest()
	for i := range 60 {
		l.Log("tick", slog.LevelWarn, "run skipped", "job", "tick", "n", i)
	}
	l.Log("other", slog.LevelWarn, "run skipped", "job", "other")
	m.fire() // the minute is over
	m.fire() // a quiet minute: nothing to say, the window closes
	l.Log("tick", slog.LevelWarn, "run skipped", "job", "tick", "n", 60)
	l.Close()
	want := []string{
		`level=WARN msg="run skipped" job=tick n=0`,
		`level=WARN msg="run skipped" job=other`,
		`level=WARN msg="run skipped" job=tick n=59 repeats=59`,
		`level=WARN msg="run skipped" job=tick n=60`,
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRateLogCloseFlushesTheCount(t *testing.T) {
	l, _, buf := newTest()
	l.Log("k", slog.LevelWarn, "notification not delivered", "target", "a")
	l.Log("k", slog.LevelWarn, "notification not delivered", "target", "a")
	l.Close()
	l.Log("k", slog.LevelWarn, "notification not delivered", "target", "a")
	if got, want := strings.Count(buf.String(), "\n"), 3; got != want || !strings.Contains(buf.String(), "repeats=1") {
		t.Errorf("logged %d lines, want %d (first, count at close, one after close):\n%s", got, want, buf.String())
	}
}
