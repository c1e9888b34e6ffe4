package history

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// reportEvery is how often one kind of history failure is logged: a full
// disk fails every write and every output line, which must not turn into
// thousands of log lines a second.
const reportEvery = time.Minute

// reporter logs history failures, each kind (op) at most once per
// reportEvery, with how many were suppressed since the last one.
type reporter struct {
	log *slog.Logger
	now func() time.Time
	// failures counts every failed write, logged or not, for the metrics.
	failures atomic.Int64

	mu    sync.Mutex
	last  map[string]time.Time
	muted map[string]int
}

func newReporter(log *slog.Logger) *reporter {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &reporter{log: log, now: time.Now, last: map[string]time.Time{}, muted: map[string]int{}}
}

// allow tells whether op may be logged now, and how many were suppressed.
func (r *reporter) allow(op string) (bool, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if t, ok := r.last[op]; ok && now.Sub(t) < reportEvery {
		r.muted[op]++
		return false, 0
	}
	n := r.muted[op]
	r.last[op], r.muted[op] = now, 0
	return true, n
}

func (r *reporter) error(op string, err error) {
	r.failures.Add(1)
	if ok, n := r.allow(op); ok {
		r.log.Error("history: "+op+" failed", "err", err, "suppressed", n)
	}
}

func (r *reporter) degraded(cause error, waiting int) {
	if ok, n := r.allow("degraded"); ok {
		r.log.Error("history degraded: jobs keep running; their records wait in memory until the store takes writes again",
			"reason", cause, "waiting", waiting, "suppressed", n)
	}
}

func (r *reporter) recovered(after time.Duration, lost int) {
	if ok, _ := r.allow("recovered"); ok {
		r.log.Warn("history recovered: waiting records written", "degraded_for", after.Round(time.Millisecond).String(), "lost", lost)
	}
}
