package run

import "time"

// ScheduleChange says what a ScheduleVersion changed about its job.
type ScheduleChange string

// The changes a daemon records when it applies jobs.yaml.
const (
	// ScheduleKnown is the first version a store holds of a job that may
	// have run before it (the store began keeping versions then): the
	// slots before it are judged by it.
	ScheduleKnown ScheduleChange = "known"
	// ScheduleAdded is a job new to a store that already kept versions:
	// nothing was owed before it.
	ScheduleAdded ScheduleChange = "added"
	// ScheduleChanged is a new expression, zone, jitter or enabled.
	ScheduleChanged ScheduleChange = "changed"
	// ScheduleRemoved is a job gone from jobs.yaml: nothing is owed from
	// it on, until a later version.
	ScheduleRemoved ScheduleChange = "removed"
)

// ScheduleVersion is what decided a job's slots from an instant on: the
// definition a daemon applied at start-up, or at a reload that changed
// it, so that a slot is judged against the schedule in force at its
// instant.
type ScheduleVersion struct {
	Job      string
	Since    time.Time      // when the daemon applied it
	Change   ScheduleChange // what it changed
	Schedule string         // the expression as written ("" when removed)
	Zone     string         // the name of the zone it is evaluated in ("Local": the host's own)
	Jitter   time.Duration
	Enabled  bool
	Host     string // the host whose daemon applied it
}

// SameSlots reports whether v and o owe the same slots the same way: a
// new version is recorded only when this is false.
func (v ScheduleVersion) SameSlots(o ScheduleVersion) bool {
	if v.Job != o.Job {
		return false
	}
	if v.Change == ScheduleRemoved || o.Change == ScheduleRemoved {
		return v.Change == o.Change
	}
	return v.Schedule == o.Schedule && v.Zone == o.Zone && v.Jitter == o.Jitter && v.Enabled == o.Enabled
}
