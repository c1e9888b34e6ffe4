package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"cronvisor/schedule"
)

// jobKeys are the keys a job may set, as in the contract.
var jobKeys = []string{"name", "schedule", "timezone", "command", "shell", "dir", "env",
	"timeout", "kill_grace", "overlap", "lock", "jitter", "catch_up", "enabled", "on_lock_lost"}

// defaultKeys are the job keys defaults may set. Not name, which must be
// unique, nor lock: one lock shared by every job would run them one at a
// time, which nobody wants from a line in defaults.
var defaultKeys = slices.DeleteFunc(slices.Clone(jobKeys), func(k string) bool {
	return k == "name" || k == "lock"
})

// fieldOrder decodes the keys others depend on first: the zone before the
// schedule, the shell before a string command.
var fieldOrder = []string{"name", "timezone", "schedule", "shell", "command", "dir", "env",
	"timeout", "kill_grace", "overlap", "lock", "jitter", "catch_up", "enabled", "on_lock_lost"}

// reservedEnv are set by cronvisor for every run; a job may not override them.
var reservedEnv = []string{"CRONVISOR_JOB", "CRONVISOR_RUN_ID", "CRONVISOR_SCHEDULED_AT",
	"CRONVISOR_DEADLINE", "CRONVISOR_LAST_OK_SLOT"}

var (
	namePattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	envPattern  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// maxNameLen keeps STATE_DIR/locks/NAME.lock and log names under the usual
// 255-byte file name limit.
const maxNameLen = 200

func isJobKey(k string) bool { return slices.Contains(jobKeys, k) }

// defaults checks the defaults block and returns its entries. Its values are
// checked once here, so mistakes show even when no job inherits them; the
// repeats when jobs inherit them are dropped by tidy.
func (d *decoder) defaults(n *yaml.Node) map[string]entry {
	defs := d.keyed(n, "defaults", defaultKeys, func(key string) (string, bool) {
		switch key {
		case "name":
			return "defaults cannot set name: each job needs its own", true
		case "lock":
			return "defaults cannot set lock: a lock shared by all jobs would run them one at a time; set it per job", true
		}
		return "", false
	})
	scratch := newJob(d.dir, n)
	d.fill(&scratch, defs)
	return defs
}

// jobs decodes the jobs list and checks that names are unique.
func (d *decoder) jobs(e entry, defs map[string]entry) []Job {
	n := resolve(e.val)
	switch {
	case isNull(n) || (n.Kind == yaml.SequenceNode && len(n.Content) == 0):
		d.warnf(e.key, "jobs is empty: no jobs will run")
		return nil
	case n.Kind != yaml.SequenceNode:
		d.errorf(e.val, "jobs: expected a list of jobs (- name: ...), found %s", describe(e.val))
		return nil
	}
	out := make([]Job, 0, len(n.Content)) // no growth slack: jobs stay resident
	first := make(map[string]Pos, len(n.Content))
	for _, item := range n.Content {
		j, ok := d.job(item, defs)
		if !ok || j.Name == "" {
			continue
		}
		if p, dup := first[j.Name]; dup {
			d.report(j.At("name"), false, "duplicate job name %q (first at line %d)", j.Name, p.Line)
			continue
		}
		first[j.Name] = j.At("name")
		out = append(out, j)
	}
	return out
}

// job decodes one job with defaults applied where it is silent. env is
// merged variable by variable, so defaults can set a common PATH or TZ
// that a job's own env extends.
func (d *decoder) job(n *yaml.Node, defs map[string]entry) (Job, bool) {
	item := resolve(n)
	if item.Kind != yaml.MappingNode {
		d.errorf(n, "a job must be a mapping with keys like name, schedule and command, found %s", describe(n))
		return Job{}, false
	}
	own := d.keyed(item, "job", jobKeys, func(key string) (string, bool) {
		if slices.Contains(topKeys, key) {
			return fmt.Sprintf("%s belongs at the top level of the file, not in a job", key), true
		}
		return "", false
	})
	fields := make(map[string]entry, len(jobKeys))
	maps.Copy(fields, defs)
	maps.Copy(fields, own)
	j := newJob(d.dir, n)
	if _, mine := own["env"]; mine {
		if e, ok := defs["env"]; ok {
			d.env(&j, e.val)
		}
	}
	d.fill(&j, fields)
	d.require(&j, n, fields)
	if e, ok := own["shell"]; ok && isList(fields["command"]) {
		d.warnf(e.key, "shell is not used: a command given as a list runs without a shell")
	}
	if e, ok := own["lock"]; ok && j.Overlap == OverlapAllow {
		d.warnf(e.key, "lock is not used: overlap allow takes no lock")
	}
	return j, true
}

func isList(e entry) bool {
	return e.val != nil && resolve(e.val).Kind == yaml.SequenceNode
}

func newJob(dir string, n *yaml.Node) Job {
	return Job{
		Shell: DefaultShell, Dir: dir, Location: time.Local,
		KillGrace: DefaultKillGrace, Overlap: OverlapSkip, Enabled: true, OnLockLost: LockLostEnd,
		Line: n.Line, Col: n.Column,
	}
}

// require reports the keys a job must have, from itself or defaults.
func (d *decoder) require(j *Job, n *yaml.Node, fields map[string]entry) {
	label := "job"
	if j.Name != "" {
		label = fmt.Sprintf("job %q", j.Name)
	}
	if _, ok := fields["name"]; !ok {
		d.errorf(n, "job has no name")
	}
	if _, ok := fields["schedule"]; !ok {
		d.errorf(n, "%s has no schedule", label)
	}
	if _, ok := fields["command"]; !ok {
		d.errorf(n, "%s has no command", label)
	}
	if _, ok := fields["timeout"]; !ok {
		d.errorf(n, `%s has no timeout; set one or write "timeout: none"`, label)
	}
	if j.Lock == "" {
		j.Lock = j.Name
	}
}

// fill decodes the given fields into j.
func (d *decoder) fill(j *Job, fields map[string]entry) {
	j.Pos = slices.Grow(j.Pos, len(fields))
	for _, k := range fieldOrder {
		if e, ok := fields[k]; ok {
			j.Pos = append(j.Pos, KeyPos{k, pos(e.val)})
			d.field(j, k, e.val)
		}
	}
}

func (d *decoder) field(j *Job, key string, n *yaml.Node) {
	switch key {
	case "name":
		j.Name = d.name(key, n)
	case "lock":
		j.Lock = d.name(key, n)
	case "timezone":
		d.timezone(j, n)
	case "schedule":
		d.schedule(j, n)
	case "shell":
		if s, ok := d.text(key, n); ok {
			if !filepath.IsAbs(s) {
				d.errorf(n, "shell: %q is not an absolute path (like /bin/sh)", s)
			}
			j.Shell = s
		}
	case "command":
		d.command(j, n)
	case "dir":
		if s, ok := d.text(key, n); ok {
			j.Dir = d.abs(s)
		}
	case "env":
		d.env(j, n)
	case "timeout":
		d.timeout(j, n)
	case "overlap":
		d.overlap(j, n)
	case "enabled":
		j.Enabled, _ = d.boolean(key, n)
	case "kill_grace":
		d.setDuration(&j.KillGrace, key, n)
	case "jitter":
		d.setDuration(&j.Jitter, key, n)
	case "catch_up":
		d.setDuration(&j.CatchUp, key, n)
	case "on_lock_lost":
		if s, ok := d.text(key, n); ok {
			switch LockLost(s) {
			case LockLostEnd, LockLostContinue:
				j.OnLockLost = LockLost(s)
			default:
				d.errorf(n, "on_lock_lost: %q is not one of end, continue", s)
			}
		}
	}
}

func (d *decoder) setDuration(dst *time.Duration, key string, n *yaml.Node) {
	if v, ok := d.duration(key, n); ok {
		*dst = v
	}
}

// name checks a job or lock name: it becomes part of file names.
func (d *decoder) name(key string, n *yaml.Node) string {
	s, ok := d.text(key, n)
	switch {
	case !ok:
	case !namePattern.MatchString(s):
		d.errorf(n, "%s %q may contain only letters, digits, _ . and -", key, s)
	case s == "." || s == "..":
		d.errorf(n, "%s %q is not allowed: it names a directory", key, s)
	case len(s) > maxNameLen:
		d.errorf(n, "%s is longer than %d characters", key, maxNameLen)
	}
	return s
}

func (d *decoder) timezone(j *Job, n *yaml.Node) {
	s, ok := d.text("timezone", n)
	if !ok {
		return
	}
	j.Timezone = s
	loc, err := time.LoadLocation(s)
	if err != nil {
		d.errorf(n, "timezone: unknown zone %q; use an IANA name like Europe/Berlin or UTC", s)
		return
	}
	j.Location = loc
}

func (d *decoder) schedule(j *Job, n *yaml.Node) {
	s, ok := d.text("schedule", n)
	if !ok {
		return
	}
	j.Schedule = s
	sched, err := schedule.Parse(s, j.Location)
	if err != nil {
		d.errorf(n, "%v", err) // it names the expression
		return
	}
	j.Sched = sched
}

// command decodes a string (run as Shell -c STRING, like a crontab line) or
// a list (exec'd as argv, no shell quoting to get wrong).
func (d *decoder) command(j *Job, n *yaml.Node) {
	rn := resolve(n)
	switch {
	case rn.Kind == yaml.ScalarNode && !isNull(rn):
		if strings.TrimSpace(rn.Value) == "" {
			d.errorf(n, "command is empty")
			return
		}
		j.Command = []string{j.Shell, "-c", rn.Value}
	case rn.Kind == yaml.SequenceNode && len(rn.Content) > 0:
		argv := make([]string, 0, len(rn.Content))
		for _, item := range rn.Content {
			ri := resolve(item)
			if ri.Kind != yaml.ScalarNode || isNull(ri) {
				d.errorf(item, "command: each argument must be a string, found %s", describe(item))
				return
			}
			argv = append(argv, ri.Value)
		}
		if strings.TrimSpace(argv[0]) == "" {
			d.errorf(rn.Content[0], "command: the program (the first item) is empty")
			return
		}
		j.Command = argv
	case rn.Kind == yaml.SequenceNode:
		d.errorf(n, "command: the list is empty")
	default:
		d.errorf(n, "command: expected a string or a list of strings, found %s", describe(n))
	}
}

// env decodes NAME: value pairs into j.Env, on top of what is there.
// Numbers and booleans are taken as written: PORT: 8080 means "8080".
func (d *decoder) env(j *Job, n *yaml.Node) {
	rn := resolve(n)
	if isNull(rn) {
		return
	}
	if rn.Kind != yaml.MappingNode {
		d.errorf(n, "env: expected a mapping of NAME: value, found %s", describe(n))
		return
	}
	if j.Env == nil {
		j.Env = make(map[string]string)
	}
	for _, e := range d.entries(rn, 0) {
		v := resolve(e.val)
		switch {
		case !envPattern.MatchString(e.name):
			d.errorf(e.key, "env: %q is not a valid variable name", e.name)
		case slices.Contains(reservedEnv, e.name):
			d.errorf(e.key, "env: %s is set by cronvisor for each run", e.name)
		case isNull(v):
			d.errorf(e.val, `env %s has no value; write %s: "" for an empty one`, e.name, e.name)
		case v.Kind != yaml.ScalarNode:
			d.errorf(e.val, "env %s: expected a string, found %s", e.name, describe(e.val))
		default:
			j.Env[e.name] = v.Value
		}
	}
}

// timeout decodes a positive duration or "none". Zero is refused because
// it reads as either "no deadline" or "kill at once"; "none" says which.
func (d *decoder) timeout(j *Job, n *yaml.Node) {
	if rn := resolve(n); rn.Kind == yaml.ScalarNode && rn.Value == "none" {
		j.Timeout = 0
		return
	}
	v, ok := d.duration("timeout", n)
	if ok && v == 0 {
		d.errorf(n, `timeout: 0 would end every run at once; write "timeout: none" for no deadline`)
		return
	}
	j.Timeout = v
}

func (d *decoder) overlap(j *Job, n *yaml.Node) {
	s, ok := d.text("overlap", n)
	if !ok {
		return
	}
	switch o := Overlap(s); o {
	case OverlapSkip, OverlapQueue, OverlapReplace, OverlapAllow:
		j.Overlap = o
		return
	}
	hint := ""
	switch lower := strings.ToLower(s); lower {
	case "forbid":
		hint = ` (Kubernetes' "Forbid" is "skip")`
	case "skip", "queue", "replace", "allow":
		hint = fmt.Sprintf(" (did you mean %q?)", lower)
	}
	d.errorf(n, "overlap: %q is not one of skip, queue, replace, allow%s", s, hint)
}
