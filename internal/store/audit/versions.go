package audit

import (
	"sort"
	"time"

	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
	"cronvisor/internal/config"
)

// span is a stretch of time over which one version of a job's schedule
// was in force: its slots in [from, to) are owed as job defines them.
type span struct {
	from, to time.Time  // zero from: since ever; zero to: until now
	job      config.Job // the job as the version defined it
	owes     bool       // false: the job was removed, nothing is owed
}

// contains reports whether t is within s.
func (s span) contains(t time.Time) bool {
	return !t.Before(s.from) && (s.to.IsZero() || t.Before(s.to))
}

// timeline is j's spans from the versions of its schedule (any host, any
// order), in time order. Without versions, j's definition is in force
// throughout; before the first version, the first is (unless it added
// the job: then nothing was owed). A version that owes the slots as the
// one before does (another host's record of the same change) starts no
// span.
func timeline(j config.Job, versions []run.ScheduleVersion) []span {
	if len(versions) == 0 {
		return []span{{job: j, owes: true}}
	}
	vs := append([]run.ScheduleVersion(nil), versions...)
	sort.SliceStable(vs, func(a, b int) bool { return vs[a].Since.Before(vs[b].Since) })
	var out []span
	for i, v := range vs {
		if i > 0 && vs[i-1].SameSlots(v) {
			continue
		}
		s := span{from: v.Since, job: j, owes: v.Change != run.ScheduleRemoved}
		if s.owes {
			s.job = versionJob(j, v)
		}
		if i == 0 && v.Change != run.ScheduleAdded {
			s.from = time.Time{}
		}
		if len(out) > 0 {
			out[len(out)-1].to = v.Since
		}
		out = append(out, s)
	}
	return out
}

// versionJob is j as version v defined it. An expression or zone that
// does not parse here (written by another cronvisor) leaves j's own
// schedule.
func versionJob(j config.Job, v run.ScheduleVersion) config.Job {
	j.Enabled, j.Jitter = v.Enabled, v.Jitter
	if v.Schedule == j.Schedule && v.Zone == j.Location.String() {
		return j
	}
	loc, err := time.LoadLocation(v.Zone)
	if err != nil {
		return j
	}
	s, err := schedule.ParseFor(v.Schedule, loc, j.Name)
	if err != nil {
		return j
	}
	j.Schedule, j.Sched, j.Location = v.Schedule, s, loc
	return j
}

// byJob groups versions by job.
func byJob(versions []run.ScheduleVersion) map[string][]run.ScheduleVersion {
	out := map[string][]run.ScheduleVersion{}
	for _, v := range versions {
		out[v.Job] = append(out[v.Job], v)
	}
	return out
}
