// Package journal turns the runner's events into history: a row per run and
// per skip in the store, and each run's output in its log file. It is the
// lossless listener of the event fan-out. A failing store degrades it:
// jobs keep running, their records wait in a bounded queue in memory and
// are written once the store takes writes again (see Health).
package journal

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"cronvisor/history"
	"cronvisor/lock"
	"cronvisor/runner"
)

// Journal records events. Its Handle method is a runner.Fanout listener.
type Journal struct {
	store    *history.Store
	stateDir string
	logLimit int64
	rep      *reporter
	host     string
	pid      int

	// Store writes are group-committed: one transaction at a time takes
	// every write queued so far. Concurrent writers on the pool's
	// separate connections would collide on SQLite's write lock and back
	// off in its busy handler (sleeps of 1, 2, 5 ... ms): 100 runs
	// starting at once took 2.5 times longer to record, and held the
	// connections that the next fires' CRONVISOR_LAST_OK_SLOT reads wait
	// for; and a commit per write paid an fsync per run start and end
	// (see BENCHMARKS.md).
	qmu      sync.Mutex
	queue    []*pendingWrite
	flushing bool // a goroutine is committing; it takes the queue after
	// pending counts the runs about to start (see GatherDuring); nil: none.
	pending func() int

	// While the store fails (degraded), writes wait in held, oldest
	// first, for the retry loop. held, the queue and two records per
	// admitted run stay within maxWaiting.
	held       []*pendingWrite
	degraded   bool
	since      time.Time
	reason     string
	lost       int                 // records without a reservation dropped at the bound
	admitted   map[string]struct{} // runs whose records are reserved
	maxWaiting int
	retryEvery time.Duration
	kick       chan struct{} // degraded began: the retry loop starts ticking
	stop       chan struct{}
	loopDone   chan struct{}
	closeOnce  sync.Once

	mu   sync.Mutex
	logs map[string]*runLog // run id -> its output log
}

// runLog is a run's output log. The file is created at the run's first
// line: most cron jobs print nothing, and a file per run costs about as
// much CPU as a history commit (0.1-0.2 ms here) and leaves an empty file
// per silent run behind (a million with keep_runs 1000 and 1,000 jobs).
// A run that printed nothing has no log file and an empty log_path; a
// running run's row gets its log_path when the run ends.
type runLog struct {
	stateDir, job, runID string
	limit                int64

	mu     sync.Mutex
	log    *history.Log // nil until the first line
	failed bool         // creating the file failed; the run's lines are dropped
}

// Option configures a Journal.
type Option func(*Journal)

// WithMaxWaiting bounds the records held while the store fails
// (default DefaultMaxWaiting).
func WithMaxWaiting(n int) Option { return func(j *Journal) { j.maxWaiting = n } }

// WithRetryEvery sets how often held records are tried again (tests).
func WithRetryEvery(d time.Duration) Option { return func(j *Journal) { j.retryEvery = d } }

// DefaultMaxWaiting is the bound on held records: a few MiB of memory,
// hours of a busy crontab's records.
const DefaultMaxWaiting = 10000

// New returns a journal writing to store and to logs under stateDir.
// Failures are logged to log, each kind at most once a minute. Close
// stops its retry loop.
func New(store *history.Store, stateDir string, logLimit int64, log *slog.Logger, opts ...Option) *Journal {
	host, _ := os.Hostname()
	j := &Journal{store: store, stateDir: stateDir, logLimit: logLimit, rep: newReporter(log),
		host: host, pid: os.Getpid(), logs: map[string]*runLog{},
		admitted: map[string]struct{}{}, maxWaiting: DefaultMaxWaiting, retryEvery: retryEvery,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{})}
	for _, o := range opts {
		o(j)
	}
	go j.retryLoop()
	return j
}

// writeTimeout bounds one store write so that a wedged database cannot
// stall the runner for long; busy_timeout retries happen inside it.
const writeTimeout = 10 * time.Second

// Handle records one event.
func (j *Journal) Handle(ev runner.Event) {
	// Output lines come by the million from a chatty job and only go to
	// its log file: no store write, so no deadline (a context with a
	// timer per line was most of the cost of a line).
	if e, ok := ev.(runner.RunOutput); ok {
		j.mu.Lock()
		l := j.logs[e.RunID]
		j.mu.Unlock()
		if l != nil {
			j.output(l, e.Stream, e.Line)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	switch e := ev.(type) {
	case runner.RunStarted:
		j.started(ctx, e)
	case runner.RunFinished:
		j.finished(ctx, e)
	case runner.RunSkipped:
		r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: history.OutcomeSkipped,
			ScheduledAt: e.Slot, Reason: e.Reason, Holder: holder(e.Holder),
			Host: j.host, SupervisorPID: j.pid, Manual: e.Manual}
		if r.ScheduledAt.IsZero() {
			r.ScheduledAt = e.Time
		}
		j.write(ctx, "record skip", history.Write{Kind: history.WriteSkip, Record: r})
	}
}

// write makes one store write and returns once it is committed, or held
// for a retry while the store fails (or its deadline passed: it stays
// queued): with the event recorded, a crash of this process is all that can
// lose it. The write joins the queue; if no commit is in progress this
// goroutine commits the queue, else the committing one takes it next.
func (j *Journal) write(ctx context.Context, op string, w history.Write) {
	p := &pendingWrite{w: w, done: make(chan error, 1)}
	j.enqueue(p, true)
	select {
	case err := <-p.done:
		if err != nil {
			j.rep.error(op, err)
		}
	case <-ctx.Done():
		j.rep.error(op+" (still queued)", ctx.Err())
	}
}

// writeBehind queues a write and returns before its commit, which reports
// its own error. A run's start row is written so: the commit cannot happen
// sooner for being waited for, and the run's goroutine, which waited there
// before reading the child's output and reaping it, spent a commit's fsync
// per run doing nothing (see BENCHMARKS.md). The run's end waits for its
// commit, queued behind the start's, before the lock is released.
func (j *Journal) writeBehind(op string, w history.Write) {
	j.enqueue(&pendingWrite{w: w, behind: true, op: op}, false)
}

// flush commits the queue in one transaction. Writes queued meanwhile are
// committed by a new goroutine, so that the caller, a run's goroutine
// whose own write is done, goes on. When the store fails, the batch and
// the queue are held for the retry loop.
func (j *Journal) flush() {
	j.qmu.Lock()
	batch := j.queue
	j.queue = nil
	j.qmu.Unlock()
	if failed, cause := j.commit(batch); len(failed) > 0 {
		j.hold(failed, cause)
		return
	}
	j.qmu.Lock()
	defer j.qmu.Unlock()
	if len(j.queue) == 0 {
		j.flushing = false
		return
	}
	if len(j.queue) < burstSize && (j.pending == nil || j.pending() < burstStarts) {
		go j.flush()
		return
	}
	// Many writes came in while this batch committed, or many runs are
	// about to start: a burst. The next batch waits a moment to gather
	// more writes, so that the burst's forks compete with fewer
	// transactions (each pays SQLite's page writes and an fsync, whatever
	// its size).
	time.AfterFunc(burstGather, j.flush)
}

// GatherDuring tells the journal how many runs are about to start (a
// Supervisor's Starting): while burstStarts or more are, their writes are
// coming, and the batch after a commit waits burstGather for them. Call it
// before the first event.
func (j *Journal) GatherDuring(pending func() int) { j.pending = pending }

// A batch that follows another and already has burstSize writes, or
// follows it while burstStarts runs are about to start, waits burstGather
// for more. Fewer writes commit at once: a few runs ending
// and starting back to back wait for every commit, and 10 ms each cut
// two workers' guarded runs from 900 to 135 a second (BenchmarkGuardedRuns).
//
// burstStarts is 3: two runs looping back to back are at most 2 pending
// starts, and must not wait; from 3 on, a commit's writes are coming from
// a burst. 100 jobs on the same second (Go stamp, A/B): last start 1.43 ->
// 1.27-1.35 x bare.
const (
	burstSize   = 8
	burstStarts = 3
	burstGather = 10 * time.Millisecond
)

func (j *Journal) started(ctx context.Context, e runner.RunStarted) {
	r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: history.OutcomeRunning,
		ScheduledAt: e.Slot, StartedAt: e.Started, Host: j.host, SupervisorPID: j.pid,
		PID: e.PID, Manual: e.Manual}
	j.mu.Lock()
	j.logs[e.RunID] = &runLog{stateDir: j.stateDir, job: e.Job, runID: e.RunID, limit: j.logLimit}
	j.mu.Unlock()
	j.writeBehind("record run start", history.Write{Kind: history.WriteStart, Record: r})
}

// output appends a line to the run's log, creating the file on the first.
func (j *Journal) output(l *runLog, stream, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil && !l.failed {
		log, err := history.NewLog(l.stateDir, l.job, l.runID, l.limit)
		if err != nil {
			l.failed = true
			j.rep.error("create run log", err)
			return
		}
		l.log = log
	}
	if l.log == nil {
		return
	}
	if err := l.log.WriteLines(stream, line); err != nil {
		j.rep.error("write run log", err)
	}
}

// closeLog closes the run's log file, if it has one, and returns its path.
func (j *Journal) closeLog(l *runLog) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return ""
	}
	if err := l.log.Close(); err != nil {
		j.rep.error("close run log", err)
	}
	return l.log.Path()
}

func (j *Journal) finished(ctx context.Context, e runner.RunFinished) {
	j.mu.Lock()
	l := j.logs[e.RunID]
	delete(j.logs, e.RunID)
	j.mu.Unlock()
	defer j.release(e.RunID)
	r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: string(e.Outcome),
		ScheduledAt: e.Slot, StartedAt: e.Started, EndedAt: e.Ended, ExitCode: e.ExitCode,
		Reason: e.Reason, Host: j.host, SupervisorPID: j.pid, PID: e.PID, Manual: e.Manual}
	if l != nil {
		r.LogPath = j.closeLog(l)
	}
	j.write(ctx, "record run end", history.Write{Kind: history.WriteFinish, Record: r})
}

func holder(h *lock.Holder) *history.Holder {
	if h == nil {
		return nil
	}
	return &history.Holder{PID: h.PID, Host: h.Host, Job: h.Job, RunID: h.RunID, Since: h.Since}
}
