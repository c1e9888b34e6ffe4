package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"cronvisor/internal/base/ratelog"
	"cronvisor/internal/base/run"
	"cronvisor/internal/lock"
)

// logEvents writes one record per run start and end, and per skip, each
// with job and run_id. Scheduled skips go through skips: a job skipped
// the same way every second (its lock held by a long run) is one record a
// minute with a count, while history keeps a record of each. Output
// lines take their own path (outlog): rate-capped, and never waited for
// by the run.
func logEvents(log *slog.Logger, skips *ratelog.Limiter) func(run.Event) {
	return func(ev run.Event) {
		switch e := ev.(type) {
		case run.Start:
			log.Info("run started", "job", e.Job, "run_id", e.RunID, "slot", e.Slot.Format(time.RFC3339Nano), "pid", e.PID, "manual", e.Manual)
		case run.Output: // see outlog
		case run.End:
			if e.Amends && e.Retrying {
				break // a resumed slot's wait, which recovery logs
			}
			attrs := []any{"job", e.Job, "run_id", e.RunID, "outcome", string(e.Outcome), "slot", e.Slot.Format(time.RFC3339Nano)}
			if e.ExitCode != nil {
				attrs = append(attrs, "exit_code", *e.ExitCode)
			}
			if !e.Started.IsZero() {
				attrs = append(attrs, "duration", e.Ended.Sub(e.Started).String())
			}
			if e.Reason != "" {
				attrs = append(attrs, "reason", e.Reason)
			}
			level := slog.LevelInfo
			if e.Outcome != run.OK {
				level = slog.LevelWarn
			}
			log.Log(context.Background(), level, "run finished", attrs...)
		case run.Skip:
			attrs := []any{"job", e.Job, "run_id", e.RunID, "slot", e.Slot.Format(time.RFC3339Nano), "reason", e.Reason}
			if e.Holder != nil {
				attrs = append(attrs, "holder_pid", e.Holder.PID, "holder_host", e.Holder.Host, "holder_run_id", e.Holder.RunID)
			}
			if e.Manual { // an operator's run-now: always said
				log.Warn("run skipped", attrs...)
				break
			}
			skips.Log(e.Job+"\x00"+string(e.Class), slog.LevelWarn, "run skipped", attrs...)
		case run.Reload:
			// A refused reload has logged its problems; it loaded nothing.
			if len(e.Problems) == 0 {
				log.Info("config reloaded", "jobs", e.Jobs)
			}
		case run.HostLost:
			log.Warn("closed a run of a lost host", "job", e.Job, "run_id", e.RunID, "host", e.Host,
				"started", e.Started.Format(time.RFC3339Nano), "reason", e.Reason)
		case run.Stall:
			log.Error("no next fire: the job is not scheduled until one is found", "job", e.Job,
				"after", e.After.Format(time.RFC3339Nano), "retry", e.Retry.Format(time.RFC3339Nano))
		default:
			log.Debug(fmt.Sprintf("event %T", ev))
		}
	}
}

// redisLog routes go-redis's own messages (pool dial failures during an
// outage) into the structured log instead of bare stderr lines.
type redisLog struct{ log *slog.Logger }

func (r redisLog) Printf(_ context.Context, format string, v ...any) {
	r.log.Warn("redis: " + fmt.Sprintf(format, v...))
}

// maxClockSkew is how far this host's clock may be from the lock
// server's (a backend that can tell: lock.ClockSkewer) before
// cronvisor warns: slots are wall-clock instants, so hosts whose clocks
// disagree by more fire the "same" slot at visibly different times.
const maxClockSkew = 500 * time.Millisecond

func warnClockSkew(r lock.ClockSkewer, backend string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	skew, err := r.ClockSkew(ctx)
	switch {
	case err != nil:
		log.Warn("cannot compare clocks with the lock backend's server", "backend", backend, "err", err)
	case skew > maxClockSkew || skew < -maxClockSkew:
		log.Warn("this host's clock is off the lock backend's server's; fix NTP: slots are wall-clock instants",
			"backend", backend, "skew", skew.String())
	}
}
