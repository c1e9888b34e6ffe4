// Package outlog copies the output lines of runs into the supervisor's own
// log without ever making a run wait for it.
//
// A run's output reader hands each line to Handle, which only queues it:
// one goroutine, owned by the Logger, writes the queue to the log at a
// capped rate. The queue is bounded; once it is full, lines are dropped
// until the writer has emptied it, so the log shows whole blocks of lines
// separated by one record per gap: "N lines of JOB RUN not logged". The
// run's own log file is written by another listener and is not affected.
package outlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"cronvisor/internal/base/run"
)

// Defaults of the rate cap: DefaultRate lines a second on average, bursts
// of DefaultBurst. The queue holds DefaultBurst lines too: at most a
// second of the cap waits for the writer. A line counts one per started
// unitBytes, so long lines cannot make the cap a flood of bytes.
const (
	DefaultRate  = 1000
	DefaultBurst = 1000
	unitBytes    = 1024
)

// Logger queues output lines and writes them to a slog.Handler. Its Handle
// method is a runner.Fanout listener; it never blocks on the log.
type Logger struct {
	h      slog.Handler
	lim    *rate.Limiter
	perSec float64
	max    int // queue capacity, in units (see unitBytes)

	mu       sync.Mutex
	runs     map[string]*loggedRun // runs whose output is logged, by run id
	queue    []item
	queued   int  // units in queue
	shedding bool // the queue filled up: drop lines until the writer takes it
	closed   bool
	wake     chan struct{} // one pending wake-up for the writer

	stopWaits context.CancelFunc // ends the writer's rate waits at Close
	ctx       context.Context
	done      chan struct{}
}

// loggedRun is the state of one logged run.
type loggedRun struct {
	job     string
	dropped int // lines dropped since this run's last queued item
}

// item is a queued line, or the end of a run (end: no line) carrying the
// count of lines dropped at its end.
type item struct {
	job, runID   string
	stream, line string
	at           time.Time
	skipped      int // lines of this run dropped just before this item
	end          bool
}

// Option configures a Logger.
type Option func(*Logger)

// WithRate sets the cap: perSecond lines a second, bursts (and the queue)
// of burst lines.
func WithRate(perSecond float64, burst int) Option {
	return func(l *Logger) {
		l.perSec, l.max = perSecond, max(burst, 1)
	}
}

// New starts a Logger writing to h. Close stops it.
func New(h slog.Handler, opts ...Option) *Logger {
	l := &Logger{h: h, perSec: DefaultRate, max: DefaultBurst, runs: map[string]*loggedRun{},
		wake: make(chan struct{}, 1), done: make(chan struct{})}
	for _, o := range opts {
		o(l)
	}
	l.lim = rate.NewLimiter(rate.Limit(l.perSec), l.max)
	l.ctx, l.stopWaits = context.WithCancel(context.Background())
	go l.write()
	return l
}

// Handle takes the events that concern output: a run's start (whether
// its job logs output), its lines and its end.
func (l *Logger) Handle(ev run.Event) {
	switch e := ev.(type) {
	case run.Output:
		l.line(e)
	case run.Start:
		if e.LogOutput {
			l.mu.Lock()
			l.runs[e.RunID] = &loggedRun{job: e.Job}
			l.mu.Unlock()
		}
	case run.End:
		l.mu.Lock()
		if r := l.runs[e.RunID]; r != nil {
			delete(l.runs, e.RunID)
			l.end(e.RunID, r, e.Ended)
		}
		l.mu.Unlock()
	}
}

// line queues the event's lines, or counts them as dropped.
func (l *Logger) line(e run.Output) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.runs[e.RunID]
	if r == nil || l.closed {
		return
	}
	for rest := e.Line; ; {
		if l.shedding {
			r.dropped += strings.Count(rest, "\n") + 1
			return
		}
		line, next, more := strings.Cut(rest, "\n")
		if u := units(line); l.queued+u <= l.max {
			l.queued += u
			// A copy: the line is a slice of a chunk of up to 64 KiB.
			l.push(item{job: r.job, runID: e.RunID, stream: e.Stream, line: strings.Clone(line), at: e.Time, skipped: r.dropped})
			r.dropped = 0
		} else {
			l.shedding = true
			r.dropped++
		}
		if !more {
			return
		}
		rest = next
	}
}

// end queues the marker of lines dropped at the end of a run, if any. It
// is queued even when the queue is full: one per run, never dropped.
func (l *Logger) end(runID string, r *loggedRun, at time.Time) {
	if r.dropped > 0 {
		l.push(item{job: r.job, runID: runID, at: at, skipped: r.dropped, end: true})
		r.dropped = 0
	}
}

// push appends to the queue and wakes the writer. l.mu is held.
func (l *Logger) push(it item) {
	l.queue = append(l.queue, it)
	if len(l.queue) == 1 {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

func units(line string) int { return 1 + len(line)/unitBytes }

// Close writes what is queued without waiting for the rate cap, with a
// marker for every run whose lines were dropped, and stops the writer.
// Lines handed to Handle afterwards are ignored.
func (l *Logger) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for id, r := range l.runs {
		l.end(id, r, time.Now())
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
	l.mu.Unlock()
	l.stopWaits()
	<-l.done
	return nil
}

// write is the writer goroutine: it takes the whole queue at a time, so
// that the lines of a run reach the log in order and the lock is taken
// once per batch, not per line.
func (l *Logger) write() {
	defer close(l.done)
	var batch []item
	for {
		var open bool
		batch, open = l.take(batch[:0])
		for i := range batch {
			l.writeItem(batch[i])
			batch[i] = item{} // let the line be collected
		}
		if !open {
			return
		}
	}
}

// take waits for queued items (or Close) and swaps the queue for spare.
// It reports false once closed: the returned batch is the last.
func (l *Logger) take(spare []item) ([]item, bool) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 || l.closed {
			batch, closed := l.queue, l.closed
			l.queue, l.queued, l.shedding = spare, 0, false
			l.mu.Unlock()
			return batch, !closed
		}
		l.mu.Unlock()
		<-l.wake
	}
}

// writeItem writes the gap marker before it, if any, then the line, after
// waiting for the rate cap (not once Close has begun).
func (l *Logger) writeItem(it item) {
	ctx := context.Background()
	if it.skipped > 0 && l.h.Enabled(ctx, slog.LevelWarn) {
		r := slog.NewRecord(it.at, slog.LevelWarn, fmt.Sprintf("%d lines of %s %s not logged", it.skipped, it.job, it.runID), 0)
		r.AddAttrs(slog.String("job", it.job), slog.String("run_id", it.runID), slog.Int("lines_not_logged", it.skipped),
			slog.String("reason", fmt.Sprintf("output over the daemon log's cap of %g lines/s; the run's log file has them (head and tail)", l.perSec)))
		_ = l.h.Handle(ctx, r)
	}
	if it.end || !l.h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	_ = l.lim.WaitN(l.ctx, min(units(it.line), l.max)) // an error: Close began; write at once
	// The record carries the time the line was read, not the time it is
	// written: the queue may hold it for up to a second.
	r := slog.NewRecord(it.at, slog.LevelInfo, "output", 0)
	r.AddAttrs(slog.String("job", it.job), slog.String("run_id", it.runID),
		slog.String("channel", it.stream), slog.String("line", it.line))
	_ = l.h.Handle(ctx, r)
}
