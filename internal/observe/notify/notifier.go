package notify

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// Last is the newest delivery result of a job's notifications or pings.
type Last struct {
	Event  string // the notification event or ping kind
	Result string // ResultOK, ResultFailed or ResultDropped
	At     time.Time
	Err    string
}

// Notifier turns the runner's events into notifications and pings. Its
// Handle is a fan-out listener; Close flushes what is queued, within a
// bound.
type Notifier struct {
	jobs    func(name string) (config.Job, bool)
	host    string
	log     *slog.Logger
	policy  Policy
	client  *http.Client
	counted func(kind, result string)

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	closed  bool
	senders map[string]*sender
	jobsSt  map[string]*jobState
	tails   map[string]*tail // by run id, for jobs with targets or a ping

	failures *ratelog.Limiter // the log of deliveries that did not succeed
}

type jobState struct {
	failures int // consecutive slots that ended failed, timeout or error
	skips    int // consecutive skips since the last run
	notified Last
	pinged   Last // the last ping that failed; zero when none did
	// waiting is the output tail of an attempt that a retry follows, for
	// the slot's end should its retries be cut short (run.End.Amends).
	waiting *tail
}

// Option configures a Notifier.
type Option func(*Notifier)

// WithPolicy replaces DefaultPolicy (tests use short backoffs).
func WithPolicy(p Policy) Option { return func(n *Notifier) { n.policy = p } }

// WithCounter has every delivery's result counted (the metrics).
func WithCounter(f func(kind, result string)) Option { return func(n *Notifier) { n.counted = f } }

// WithHost replaces os.Hostname in payloads.
func WithHost(h string) Option { return func(n *Notifier) { n.host = h } }

// New returns a Notifier that looks each event's job up in jobs (the
// current config: targets change with a reload).
func New(jobs func(name string) (config.Job, bool), log *slog.Logger, opts ...Option) *Notifier {
	host, _ := os.Hostname()
	n := &Notifier{jobs: jobs, host: host, log: log, policy: DefaultPolicy,
		client: &http.Client{}, senders: map[string]*sender{}, jobsSt: map[string]*jobState{}, tails: map[string]*tail{}}
	for _, o := range opts {
		o(n)
	}
	n.failures = ratelog.New(log, ratelog.Every)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	return n
}

// Handle is the fan-out listener. It never blocks on a delivery.
func (n *Notifier) Handle(ev run.Event) {
	job, ok := n.jobs(ev.JobName())
	if !ok || (len(job.Notify) == 0 && job.Ping == "") {
		if f, ended := ev.(run.End); ended {
			n.forget(f.RunID) // a reload took the job's targets away mid-run
		}
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	st := n.jobsSt[job.Name]
	if st == nil {
		st = &jobState{}
		n.jobsSt[job.Name] = st
	}
	switch e := ev.(type) {
	case run.Start:
		n.tails[e.RunID] = &tail{}
		n.ping(job, "start", e.RunID, nil)
		n.notify(job, config.EventStart, n.started(e, st))
	case run.Output:
		if t := n.tails[e.RunID]; t != nil {
			t.add(e.Line)
		}
	case run.Slow:
		p := n.base(e.Job, e.RunID, e.Slot, st)
		p.Outcome, p.StartedAt, p.Attempt = "running", stamp(e.Started), e.Attempt
		p.Reason = e.Reason
		if p.Reason == "" {
			p.Reason = "still running after warn_after " + e.After.String()
		}
		p.DurationMS = e.Time.Sub(e.Started).Milliseconds()
		p.OutputTail = n.tails[e.RunID].String()
		n.notify(job, config.EventSlow, p)
	case run.End:
		n.finished(job, e, st)
	case run.Skip:
		n.skipped(job, e, st)
	case run.Fast:
		p := n.base(e.Job, e.RunID, e.Slot, st)
		p.Outcome, p.Reason, p.Attempt = string(run.OK), e.Reason, e.Attempt
		p.StartedAt, p.EndedAt, p.DurationMS, p.ExitCode, p.at = stamp(e.Started), stamp(e.Ended), e.Took.Milliseconds(), new(0), e.Ended
		n.notify(job, config.EventFast, p)
	case run.HostLost:
		n.hostLost(job, e, st)
	}
}

// hostLost: a run of another host that this peer closed. The payload's
// host is the lost host, which ran it; the job's failure streak is this
// host's and an interrupted run is no verdict on the job, so it is left
// as it is. The ping gets the run's end, as for other interrupted runs,
// since the lost host will never send it.
func (n *Notifier) hostLost(job config.Job, e run.HostLost, st *jobState) {
	p := n.base(e.Job, e.RunID, e.Slot, st)
	p.Host, p.Outcome, p.Reason, p.Attempt = e.Host, string(run.Interrupted), e.Reason, e.Attempt
	p.StartedAt, p.EndedAt, p.at = stamp(e.Started), stamp(e.Ended), e.Time
	if !e.Started.IsZero() && !e.Ended.IsZero() {
		p.DurationMS = e.Ended.Sub(e.Started).Milliseconds()
	}
	n.ping(job, "fail", e.RunID, []byte(e.Reason))
	n.notify(job, config.EventHostLost, p)
}

func (n *Notifier) forget(runID string) {
	n.mu.Lock()
	delete(n.tails, runID)
	n.mu.Unlock()
}

func (n *Notifier) base(job, runID string, slot time.Time, st *jobState) Payload {
	return Payload{Job: job, RunID: runID, Host: n.host, ScheduledAt: stamp(slot), ConsecutiveFailures: st.failures}
}

func (n *Notifier) started(e run.Start, st *jobState) Payload {
	p := n.base(e.Job, e.RunID, e.Slot, st)
	p.Outcome, p.StartedAt, p.Attempt, p.at = "running", stamp(e.Started), e.Attempt, e.Started
	return p
}

// finished: one notification per slot (an attempt with a retry to come
// only logs to the ping), and the failure streak behind recovered.
func (n *Notifier) finished(job config.Job, e run.End, st *jobState) {
	t := n.tails[e.RunID]
	delete(n.tails, e.RunID)
	if e.Amends && t == nil {
		t = st.waiting
	}
	if t == nil && e.OutputTail != "" { // a run this supervisor did not see print
		t = &tail{buf: []byte(e.OutputTail)}
	}
	st.waiting = nil
	if e.Retrying {
		st.waiting = t
	}
	st.skips = 0
	p := n.base(e.Job, e.RunID, e.Slot, st)
	p.Outcome, p.ExitCode, p.Reason, p.Attempt = string(e.Outcome), e.ExitCode, e.Reason, e.Attempt
	p.StartedAt, p.EndedAt, p.OutputTail = stamp(e.Started), stamp(e.Ended), t.String()
	if !e.Started.IsZero() {
		p.DurationMS = e.Ended.Sub(e.Started).Milliseconds()
	}
	if e.Retrying {
		if !e.Amends { // else a resumed slot's wait: its attempt was pinged when it ended
			n.ping(job, "log", e.RunID, []byte(p.OutputTail))
		}
		return
	}
	switch e.Outcome {
	case run.OK:
		n.ping(job, "", e.RunID, []byte(p.OutputTail))
		if st.failures > 0 {
			n.notify(job, config.EventRecovered, p)
		}
		st.failures = 0
		p.ConsecutiveFailures = 0
		n.notify(job, config.EventSuccess, p)
	case run.Failed, run.Timeout, run.Error:
		st.failures++
		p.ConsecutiveFailures = st.failures
		kind, ev := "fail", config.EventFailure
		if e.Outcome == run.Timeout {
			ev = config.EventTimeout
		} else if e.ExitCode != nil {
			kind = itoa(*e.ExitCode)
		}
		n.ping(job, kind, e.RunID, []byte(p.OutputTail))
		n.notify(job, ev, p)
	default: // replaced, interrupted: the end of a run, not a verdict on it
		if e.Started.IsZero() {
			return
		}
		n.ping(job, "fail", e.RunID, []byte(p.Reason))
	}
}

// skipped: missed fires are their own event; other skips page only once
// a streak reaches a target's after_skips, so that one long run that
// makes the next fire skip pages nobody. Paused and disabled jobs are
// skipped on purpose and never notify.
func (n *Notifier) skipped(job config.Job, e run.Skip, st *jobState) {
	if e.Class == run.ClassPaused || e.Class == run.ClassDisabled {
		return
	}
	p := n.base(e.Job, e.RunID, e.Slot, st)
	p.Outcome, p.Reason, p.Holder, p.EndedAt = "skipped", e.Reason, holderOf(e.Holder), stamp(e.Time)
	if job.PingSkips {
		n.ping(job, "fail", e.RunID, []byte(e.Reason))
	}
	if e.Class == run.ClassMissed {
		n.notify(job, config.EventMissed, p)
		return
	}
	st.skips++
	p.Event = "skip"
	for _, t := range job.Notify {
		if t.On.Has(config.EventSkip) && st.skips == t.AfterSkips {
			n.send(job.Name, t, p)
		}
	}
}

// notify sends p as event ev to each of job's targets that wants it.
func (n *Notifier) notify(job config.Job, ev config.Events, p Payload) {
	p.Event = config.EventName(ev)
	for _, t := range job.Notify {
		if t.On.Has(ev) {
			n.send(job.Name, t, p)
		}
	}
}

// Close stops taking events and delivers what is queued for at most
// flush; then what is left is dropped (and counted) and in-flight
// deliveries are cancelled. It returns when every sender has stopped.
func (n *Notifier) Close(flush time.Duration) {
	n.mu.Lock()
	n.closed = true
	senders := make([]*sender, 0, len(n.senders))
	for _, s := range n.senders {
		close(s.q)
		senders = append(senders, s)
	}
	n.mu.Unlock()
	t := time.NewTimer(flush)
	defer t.Stop()
	for _, s := range senders {
		select {
		case <-s.done:
			continue
		case <-t.C:
			n.cancel()
		}
		<-s.done
	}
	n.cancel()
	n.failures.Close()
}

func mustJSON(p Payload) []byte {
	b, _ := json.Marshal(p) // only strings, numbers and pointers to them
	return b
}

func headerKey(h map[string]string) string {
	keys := make([]string, 0, len(h))
	for k, v := range h {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return strings.Join(keys, "\x00")
}
