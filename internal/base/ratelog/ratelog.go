// Package ratelog logs a record that repeats (a 1-s job's lock-held skip,
// a target's failed deliveries) once per key per interval, with a count
// of the ones it held back, so that a flood stays one line a minute while
// each occurrence is still counted.
package ratelog

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Every is the interval a key is logged at most once in.
const Every = time.Minute

// Limiter logs through one logger. Its zero value is not usable: use New.
type Limiter struct {
	log   *slog.Logger
	every time.Duration
	after func(time.Duration, func()) func() bool

	mu      sync.Mutex
	windows map[string]*window
	closed  bool
}

// window is a key's interval: opened by a logged record, it counts the
// records held back until it ends.
type window struct {
	since time.Time
	held  int
	level slog.Level
	msg   string
	attrs []any // the last held record's
	stop  func() bool
}

// New returns a Limiter logging to log at most once per key per every.
func New(log *slog.Logger, every time.Duration) *Limiter {
	return &Limiter{log: log, every: every, windows: map[string]*window{},
		after: func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }}
}

// Log logs the record now when key has no open window, and opens one;
// within a window it counts the record instead. When a window ends with
// records held back, the last of them is logged with `repeats` (how many
// were held back) and `since` (when the window opened), and a new window
// opens, so a steady stream gives one record per interval.
func (l *Limiter) Log(key string, level slog.Level, msg string, attrs ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w := l.windows[key]; w != nil {
		w.held++
		w.level, w.msg, w.attrs = level, msg, attrs
		return
	}
	l.log.Log(context.Background(), level, msg, attrs...)
	if l.closed {
		return
	}
	w := &window{since: time.Now()}
	l.windows[key] = w
	w.stop = l.after(l.every, func() { l.end(key, w) })
}

// end closes w: its held-back count is logged, and a new window opens
// when there was one.
func (l *Limiter) end(key string, w *window) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.windows[key] != w {
		return
	}
	delete(l.windows, key)
	if w.held == 0 {
		return
	}
	l.flush(w)
	if l.closed {
		return
	}
	next := &window{since: time.Now()}
	l.windows[key] = next
	next.stop = l.after(l.every, func() { l.end(key, next) })
}

func (l *Limiter) flush(w *window) {
	attrs := append(append([]any(nil), w.attrs...), "repeats", w.held, "since", w.since.UTC().Format(time.RFC3339))
	l.log.Log(context.Background(), w.level, w.msg, attrs...)
}

// Close logs every count still held back and stops the timers; records
// logged after it are written at once.
func (l *Limiter) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for key, w := range l.windows {
		w.stop()
		if w.held > 0 {
			l.flush(w)
		}
		delete(l.windows, key)
	}
}
