package history

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"cronvisor/internal/base/run"
)

// Writer is the one writer of the runs table and the run logs: the
// runner's Recorder. It group-commits the store's writes on one goroutine
// of its own, writes each run's output to its log file, and, while the
// store fails, keeps the records in a bounded queue in memory and writes
// them once the store takes writes again (see Health). Close drains it.
//
// Writes are group-committed: one transaction at a time takes every write
// queued so far. Concurrent writers on the pool's separate connections
// would collide on SQLite's write lock and back off in its busy handler
// (sleeps of 1, 2, 5 ... ms), holding the connections that the next
// fires' CRONVISOR_LAST_OK_SLOT reads wait for; and a commit per write
// paid an fsync per run start and end.
type Writer struct {
	store      *Store
	stateDir   string
	logLimit   int64
	rep        *reporter
	host       string
	pid        int
	pending    func() int
	maxWaiting int
	retryEvery time.Duration
	linger     time.Duration // startLinger, or the config's

	// qmu guards the queue, the held writes and the degraded state.
	// While the store fails (degraded), writes wait in held, oldest
	// first, for a retry. held, the queue and two records per admitted
	// run stay within maxWaiting.
	qmu      sync.Mutex
	queue    []*pendingWrite
	held     []*pendingWrite
	degraded bool
	since    time.Time
	reason   string
	lost     int                 // records without a reservation dropped at the bound
	admitted map[string]struct{} // runs whose records are reserved
	closed   bool                // Close began: no write is taken any more

	wake      chan struct{} // buffered: the queue has writes, or degraded began
	stop      chan struct{}
	loopDone  chan struct{}
	closeOnce sync.Once

	mu   sync.Mutex
	logs map[string]*runLog // run id -> its output log

	// spool keeps the held writes on disk (nil: memory only); adopted
	// are dead processes' spooled writes, adoptedLeft of them not yet in
	// the store (both under qmu).
	spool       *Spool
	adopted     *Adopted
	adoptedLeft int
}

// WriterConfig is what a Writer needs.
type WriterConfig struct {
	Store    *Store
	StateDir string // run logs go under it (statedir.Dir.RunLog)
	LogLimit int64  // bytes of a run's log kept (NewLog)
	// Log gets the failures, each kind at most once a minute. Nil: none.
	Log *slog.Logger
	// Pending counts the fires about to exec (runner.Starts.Pending):
	// while burstStarts or more are, their writes are coming, and the
	// batch after a commit waits burstGather for them. Nil: none.
	Pending func() int
	// MaxWaiting bounds the records held while the store fails (0:
	// DefaultMaxWaiting); RetryEvery is how often they are tried again
	// (0: a second).
	MaxWaiting int
	RetryEvery time.Duration
	// StartLinger replaces startLinger (tests); 0: startLinger.
	StartLinger time.Duration
	// Spool, when set, keeps on disk the writes held while the store
	// fails, before their runs go on (see Spool); Close closes it. Nil:
	// they are kept in memory only.
	Spool *Spool
	// Adopted are the spooled writes of dead processes (AdoptSpools),
	// written first; their spools are removed once all are in the store,
	// or released at Close.
	Adopted *Adopted
}

// DefaultMaxWaiting is the bound on held records: a few MiB of memory,
// hours of a busy crontab's records.
const DefaultMaxWaiting = 10000

// retryEvery is how often held records are tried again: soon enough that a
// freed disk shows in history within seconds, rarely enough that a failing
// store costs nothing.
const retryEvery = time.Second

// NewWriter returns a Writer on cfg.Store, its goroutine started.
func NewWriter(cfg WriterConfig) *Writer {
	host, _ := os.Hostname()
	w := &Writer{store: cfg.Store, stateDir: cfg.StateDir, logLimit: cfg.LogLimit, rep: newReporter(cfg.Log),
		host: host, pid: os.Getpid(), pending: cfg.Pending, maxWaiting: cfg.MaxWaiting, retryEvery: cfg.RetryEvery,
		admitted: map[string]struct{}{}, logs: map[string]*runLog{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), loopDone: make(chan struct{})}
	if w.maxWaiting <= 0 {
		w.maxWaiting = DefaultMaxWaiting
	}
	if w.retryEvery <= 0 {
		w.retryEvery = retryEvery
	}
	if w.linger = cfg.StartLinger; w.linger <= 0 {
		w.linger = startLinger
	}
	w.spool, w.adopted = cfg.Spool, cfg.Adopted
	if w.adopted != nil {
		w.adoptedLeft = len(w.adopted.Writes)
		for _, wr := range w.adopted.Writes {
			w.queue = append(w.queue, &pendingWrite{w: wr, behind: true, op: "adopted record",
				spooled: true, adopted: true, tried: true, queued: time.Now()})
		}
		if w.adoptedLeft == 0 {
			w.adopted.Done()
		}
	}
	go w.loop()
	w.kick()
	return w
}

// runLog is a run's output log. The file is created at the run's first
// line: most cron jobs print nothing, and a file per run costs about as
// much CPU as a history commit and leaves an empty file per silent run
// behind. A run that printed nothing has no log file and an empty
// log_path; a running run's row gets its log_path when the run ends.
type runLog struct {
	stateDir, job, runID string
	limit                int64

	mu     sync.Mutex
	log    *Log // nil until the first line
	failed bool // creating the file failed; the run's lines are dropped
}

// writeTimeout bounds how long a run's end waits for its commit, so that a
// wedged database cannot hold the run's lock for long: the write stays
// queued, and the end is reported not durable.
const writeTimeout = 10 * time.Second

// Started queues the run's start row and returns before its commit (the
// commit cannot happen sooner for being waited for, and the run's
// goroutine, which waited there before reading the child's output, spent
// a commit's fsync per run doing nothing). The end's commit follows it.
//
// A start whose run the lock record keeps in flight (InFlightRecorded)
// waits up to startLinger for a commit: most cron runs end sooner, and
// their start then goes into the end's transaction, folded into one row,
// instead of a commit of its own. The record is what covers the wait: a
// supervisor that dies before the start is committed leaves it in flight,
// and the recovery of dead supervisors' runs records the run from it, as
// it does for one that died before any commit.
func (w *Writer) Started(e run.Start) {
	r := run.Record{Job: e.Job, RunID: e.RunID, Outcome: run.Running,
		ScheduledAt: e.Slot, StartedAt: e.Started, Host: w.host, SupervisorPID: w.pid,
		PID: e.PID, Manual: e.Manual, Attempt: e.Attempt, Resources: e.Resources, ResourceWait: e.ResourceWait}
	w.mu.Lock()
	w.logs[e.RunID] = &runLog{stateDir: w.stateDir, job: e.Job, runID: e.RunID, limit: w.logLimit}
	w.mu.Unlock()
	w.enqueue(&pendingWrite{w: Write{Kind: WriteStart, Record: r}, behind: true, op: "record run start",
		linger: e.InFlightRecorded})
}

// Output appends the lines to the run's log, creating the file on the
// first. Lines come by the million from a chatty job and only go to the
// file: no store write, no deadline.
func (w *Writer) Output(e run.Output) {
	w.mu.Lock()
	l := w.logs[e.RunID]
	w.mu.Unlock()
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil && !l.failed {
		log, err := NewLog(l.stateDir, l.job, l.runID, l.limit)
		if err != nil {
			l.failed = true
			w.rep.error("create run log", err)
			return
		}
		l.log = log
	}
	if l.log == nil {
		return
	}
	if err := l.log.WriteLines(e.Stream, e.Line); err != nil {
		w.rep.error("write run log", err)
	}
}

// WriteEnd closes the run's log and writes its end, returning once the
// end is committed; an error says it is not durable: held in memory
// until the store takes writes (ErrHeld), still queued after
// writeTimeout, or lost to a full backlog. The run is this writer's
// supervisor's own, which nobody else closes: closed is always true.
// It is an ending.Writer: call it through ending.Path.
func (w *Writer) WriteEnd(_ context.Context, e run.End) (closed bool, err error) {
	w.mu.Lock()
	l := w.logs[e.RunID]
	delete(w.logs, e.RunID)
	w.mu.Unlock()
	defer w.release(e.RunID)
	r := run.Record{Job: e.Job, RunID: e.RunID, Outcome: e.Outcome,
		ScheduledAt: e.Slot, StartedAt: e.Started, EndedAt: e.Ended, ExitCode: e.ExitCode,
		Reason: e.Reason, Host: w.host, SupervisorPID: w.pid, PID: e.PID, Manual: e.Manual, Attempt: e.Attempt,
		Usage: e.Usage, Progress: e.Progress}
	if l != nil {
		r.LogPath = w.closeLog(l)
	}
	return true, w.write("record run end", Write{Kind: WriteFinish, Record: r})
}

// WriteFailures is how many history writes (records and run logs) have
// failed since NewWriter, for the metrics.
func (w *Writer) WriteFailures() int64 { return w.rep.failures.Load() }

// WriteSkip writes a skip, returning once it is committed or held. It
// is an ending.SkipWriter: call it through ending.Path.
func (w *Writer) WriteSkip(e run.Skip) {
	r := run.Record{Job: e.Job, RunID: e.RunID, Outcome: run.Skipped,
		ScheduledAt: e.Slot, Reason: e.Reason, Holder: e.Holder,
		Host: w.host, SupervisorPID: w.pid, Manual: e.Manual, ResourceWait: e.ResourceWait}
	if r.ScheduledAt.IsZero() {
		r.ScheduledAt = e.Time
	}
	_ = w.write("record skip", Write{Kind: WriteSkip, Record: r}) // reported by write
}

// write queues one write and waits for its commit, or for it to be held
// for a retry while the store fails, or for writeTimeout (it stays
// queued). Errors other than a hold, which the degraded report covers,
// are reported here.
func (w *Writer) write(op string, wr Write) error {
	p := &pendingWrite{w: wr, done: make(chan error, 1)}
	w.enqueue(p)
	t := time.NewTimer(writeTimeout)
	defer t.Stop()
	var err error
	select {
	case err = <-p.done:
		if err != nil && !errors.Is(err, ErrHeld) {
			w.rep.error(op, err)
		}
	case <-t.C:
		err = context.DeadlineExceeded
		w.rep.error(op+" (still queued)", err)
	}
	return err
}

// closeLog closes the run's log file, if it has one, and returns its path.
func (w *Writer) closeLog(l *runLog) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil {
		return ""
	}
	if err := l.log.Close(); err != nil {
		w.rep.error("close run log", err)
	}
	return l.log.Path()
}
