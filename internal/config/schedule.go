package config

import (
	"time"

	"gopkg.in/yaml.v3"

	"cronvisor/internal/base/schedule"
)

// zone is what a timezone value decodes to; loc is nil for an unknown zone.
type zone struct {
	name string
	loc  *time.Location
}

func (d *decoder) timezone(j *Job, n *yaml.Node) {
	s, ok := d.text("timezone", n)
	if !ok {
		return
	}
	// Loaded once per zone name: a Location holds the zone's transitions,
	// and jobs in the same zone can share one.
	z, seen := d.zones[s]
	if !seen {
		z.name = s
		if loc, err := time.LoadLocation(s); err == nil {
			z.loc = loc
		}
		d.zones[s] = z
	}
	j.Timezone = z.name
	if z.loc == nil {
		d.errorf(n, "timezone: unknown zone %q; use an IANA name like Europe/Berlin or UTC", s)
		return
	}
	j.Location = z.loc
}

// schedKey is a schedule expression, the zone it is evaluated in and, for
// one that draws values (`H`, `~`), the job's name they are drawn from.
type schedKey struct {
	expr string
	loc  *time.Location
	seed string
}

// parsedSchedule is what schedule.Parse returned for a schedKey.
type parsedSchedule struct {
	expr  string // the key's, so that jobs writing it share the string
	sched schedule.Schedule
	err   error
}

func (d *decoder) schedule(j *Job, n *yaml.Node) {
	s, ok := d.text("schedule", n)
	if !ok {
		return
	}
	// Parsed once per expression and zone: a Schedule is immutable, and
	// thousands of jobs tend to share a few dozen expressions.
	key := schedKey{s, j.Location, ""}
	if schedule.Hashed(s) {
		key.seed = j.Name
	}
	p, seen := d.scheds[key]
	if !seen {
		p.expr = s
		p.sched, p.err = schedule.ParseFor(s, j.Location, key.seed)
		d.scheds[key] = p
	}
	j.Schedule = p.expr
	if p.err != nil {
		d.errorf(n, "%v", p.err) // it names the expression
		return
	}
	j.Sched = p.sched
}

// Delay is the jitter of the job's fire for slot: a delay in [0, Jitter)
// drawn from the job's name and the slot, the same on every host and
// across restarts (schedule.Delay).
func (j *Job) Delay(slot time.Time) time.Duration {
	return schedule.Delay(j.Name, slot, j.Jitter)
}
