// Package journal turns the runner's events into history: a row per run and
// per skip in the store, and each run's output in its log file. It is the
// lossless listener of the event fan-out; a failing store degrades to
// reporting the error while jobs keep running.
package journal

import (
	"context"
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
	onErr    func(op string, err error)
	host     string
	pid      int

	mu   sync.Mutex
	logs map[string]*history.Log // run id -> open output log
}

// New returns a journal writing to store and to logs under stateDir.
// onErr is told about every failed write (and must not block).
func New(store *history.Store, stateDir string, logLimit int64, onErr func(op string, err error)) *Journal {
	host, _ := os.Hostname()
	return &Journal{store: store, stateDir: stateDir, logLimit: logLimit, onErr: onErr,
		host: host, pid: os.Getpid(), logs: map[string]*history.Log{}}
}

// writeTimeout bounds one store write so that a wedged database cannot
// stall the runner for long; busy_timeout retries happen inside it.
const writeTimeout = 10 * time.Second

// Handle records one event.
func (j *Journal) Handle(ev runner.Event) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	switch e := ev.(type) {
	case runner.RunStarted:
		j.started(ctx, e)
	case runner.RunOutput:
		j.mu.Lock()
		l := j.logs[e.RunID]
		j.mu.Unlock()
		if l != nil {
			if err := l.Write(e.Stream, e.Line); err != nil {
				j.onErr("write run log", err)
			}
		}
	case runner.RunFinished:
		j.finished(ctx, e)
	case runner.RunSkipped:
		r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: history.OutcomeSkipped,
			ScheduledAt: e.Slot, Reason: e.Reason, Holder: holder(e.Holder),
			Host: j.host, SupervisorPID: j.pid, Manual: e.Manual}
		if r.ScheduledAt.IsZero() {
			r.ScheduledAt = e.Time
		}
		if err := j.store.Skip(ctx, r); err != nil {
			j.onErr("record skip", err)
		}
	}
}

func (j *Journal) started(ctx context.Context, e runner.RunStarted) {
	r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: history.OutcomeRunning,
		ScheduledAt: e.Slot, StartedAt: e.Started, Host: j.host, SupervisorPID: j.pid,
		PID: e.PID, Manual: e.Manual}
	if l, err := history.NewLog(j.stateDir, e.Job, e.RunID, j.logLimit); err != nil {
		j.onErr("create run log", err)
	} else {
		r.LogPath = l.Path()
		j.mu.Lock()
		j.logs[e.RunID] = l
		j.mu.Unlock()
	}
	if err := j.store.Start(ctx, r); err != nil {
		j.onErr("record run start", err)
	}
}

func (j *Journal) finished(ctx context.Context, e runner.RunFinished) {
	j.mu.Lock()
	l := j.logs[e.RunID]
	delete(j.logs, e.RunID)
	j.mu.Unlock()
	r := history.Record{Job: e.Job, RunID: e.RunID, Outcome: string(e.Outcome),
		ScheduledAt: e.Slot, StartedAt: e.Started, EndedAt: e.Ended, ExitCode: e.ExitCode,
		Reason: e.Reason, Host: j.host, SupervisorPID: j.pid, PID: e.PID, Manual: e.Manual}
	if l != nil {
		r.LogPath = l.Path()
		if err := l.Close(); err != nil {
			j.onErr("close run log", err)
		}
	}
	if err := j.store.Finish(ctx, r); err != nil {
		j.onErr("record run end", err)
	}
}

func holder(h *lock.Holder) *history.Holder {
	if h == nil {
		return nil
	}
	return &history.Holder{PID: h.PID, Host: h.Host, Job: h.Job, RunID: h.RunID, Since: h.Since}
}
