package daemon

import (
	"context"
	"os"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/config"
)

// scheduleWait bounds the write of the schedules' versions: a store that
// is stuck must not hold up a start-up or a reload.
const scheduleWait = 5 * time.Second

// recordSchedules keeps the history of the jobs' schedules for audit: the
// definition of each of cfg's jobs that owes its slots otherwise than the
// store's newest version of it (and the removal of each job cfg lacks),
// as in force from at, the instant the scheduler was given cfg. A failure
// is logged and lost no more than the instant: the next start-up or
// reload records what still differs.
func (d *Daemon) recordSchedules(cfg *config.Config, at time.Time) {
	host, _ := os.Hostname()
	vs := make([]run.ScheduleVersion, 0, len(cfg.Jobs))
	for _, j := range cfg.Jobs {
		if j.Sched == nil {
			continue // no schedule, no slot owed
		}
		vs = append(vs, run.ScheduleVersion{Job: j.Name, Schedule: j.Schedule, Zone: j.Location.String(),
			Jitter: j.Jitter, Enabled: j.Enabled})
	}
	ctx, cancel := context.WithTimeout(context.Background(), scheduleWait)
	defer cancel()
	changed, err := d.env.Store.RecordSchedules(ctx, at, host, vs)
	if err != nil {
		d.log.Warn("history: the schedules' versions are not recorded; audit judges their slots by the ones before", "err", err)
		return
	}
	for _, v := range changed {
		d.log.Debug("schedule version recorded", "job", v.Job, "change", string(v.Change), "schedule", v.Schedule,
			"since", v.Since.Format(time.RFC3339Nano))
	}
}
