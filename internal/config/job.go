package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// maxNameLen keeps STATE_DIR/locks/NAME.lock and log names under the usual
// 255-byte file name limit.
const maxNameLen = 200

// defaults checks the defaults block and returns its entries. Its values are
// checked once here, so mistakes show even when no job inherits them; the
// repeats when jobs inherit them are dropped by tidy.
func (d *decoder) defaults(n *yaml.Node) *jobFields {
	written := make([]entry, len(defaultKeys))
	d.keyed(n, "defaults", defaultKeys, func(key string) (string, bool) {
		if i := slices.Index(jobKeys, key); i >= 0 {
			return jobTable[i].notInDefaults, true
		}
		return "", false
	}, written)
	defs := new(jobFields)
	for i, k := range defaultIndex {
		defs[k] = written[i]
	}
	scratch, src := newJob(d.dir), JobSource{Pos: pos(n)}
	d.fill(&scratch, &src, defs, nil)
	d.runAs(&scratch, defs)
	return defs
}

// jobs decodes the jobs list and checks that names are unique. defs is nil
// when the file has no defaults. The sources are where each job was
// written, by the same index.
func (d *decoder) jobs(e entry, defs *jobFields) ([]Job, []JobSource) {
	count, items := d.jobItems(e)
	if items == nil {
		return nil, nil
	}
	if defs == nil {
		defs = new(jobFields)
	}
	out := make([]Job, 0, count) // no growth slack: jobs stay resident
	srcs := make([]JobSource, 0, count)
	first := make(map[string]Pos, count)
	for item := range items {
		j, src, ok := d.job(item, defs)
		if !ok || j.Name == "" {
			continue
		}
		if p, dup := first[j.Name]; dup {
			d.report(src.At("name"), false, "duplicate job name %q (first at line %d)", j.Name, p.Line)
			continue
		}
		first[j.Name] = src.At("name")
		out = append(out, j)
		srcs = append(srcs, src)
	}
	return out, srcs
}

// job decodes one job with defaults applied where it is silent. env is
// merged variable by variable, so defaults can set a common PATH or TZ
// that a job's own env extends.
func (d *decoder) job(n *yaml.Node, defs *jobFields) (Job, JobSource, bool) {
	item := resolve(n)
	if item.Kind != yaml.MappingNode {
		d.errorf(n, "a job must be a mapping with keys like name, schedule and command, found %s", describe(n))
		return Job{}, JobSource{}, false
	}
	var own, fields jobFields
	d.keyed(item, "job", jobKeys, func(key string) (string, bool) {
		if slices.Contains(topKeys, key) {
			return fmt.Sprintf("%s belongs at the top level of the file, not in a job", key), true
		}
		return "", false
	}, own[:])
	for i, e := range own {
		if !e.has() {
			e = defs[i]
		}
		fields[i] = e
	}
	j, src := newJob(d.dir), JobSource{Pos: pos(n)}
	var baseEnv *yaml.Node
	if own[kEnv].has() {
		baseEnv = defs[kEnv].val
	}
	d.fill(&j, &src, &fields, baseEnv)
	d.waitRule(&j, &own)
	d.runAs(&j, &fields)
	d.require(&j, n, &fields)
	d.argTotal(&j, &src)
	if e := own[kShell]; e.has() && isList(fields[kCommand]) {
		d.warnf(e.key, "shell is not used: a command given as a list runs without a shell")
	}
	if e := own[kLock]; e.has() && j.Overlap == OverlapAllow {
		d.warnf(e.key, "lock is not used: overlap allow takes no lock")
	}
	return j, src, true
}

func isList(e entry) bool {
	return e.val != nil && resolve(e.val).Kind == yaml.SequenceNode
}

func newJob(dir string) Job {
	return Job{
		Shell: DefaultShell, Dir: dir, Location: time.Local,
		KillGrace: DefaultKillGrace, Overlap: OverlapSkip, Enabled: true, OnLockLost: LockLostEnd, LogOutput: true,
		RetryBackoff: DefaultRetryBackoff, RetryBackoffMax: DefaultRetryBackoffMax, RetryOn: DefaultRetryOn,
	}
}

// require reports the keys a job must have, from itself or defaults.
func (d *decoder) require(j *Job, n *yaml.Node, fields *jobFields) {
	if !fields[kName].has() {
		d.errorf(n, "job has no name")
	}
	// The label is built only for a message: fmt per job is not free.
	if !fields[kSchedule].has() || !fields[kCommand].has() || !fields[kTimeout].has() {
		label := "job"
		if j.Name != "" {
			label = fmt.Sprintf("job %q", j.Name)
		}
		if !fields[kSchedule].has() {
			d.errorf(n, "%s has no schedule", label)
		}
		if !fields[kCommand].has() {
			d.errorf(n, "%s has no command", label)
		}
		if !fields[kTimeout].has() {
			d.errorf(n, `%s has no timeout; set one or write "timeout: none"`, label)
		}
	}
	if j.Lock == "" {
		j.Lock = j.Name
	}
}

// fill decodes the given fields into j, and where each was written into
// src. A job's env extends baseEnv, the env of defaults when the job has
// an env of its own (else nil).
func (d *decoder) fill(j *Job, src *JobSource, fields *jobFields, baseEnv *yaml.Node) {
	count := 0
	for _, e := range fields {
		if e.has() {
			count++
		}
	}
	src.Keys = slices.Grow(src.Keys, count)
	// The keys decode into the decoder's own Job: given to a function
	// value, a caller's would escape, one allocation per job.
	w := &d.work
	*w, d.baseEnv = *j, baseEnv
	for _, k := range decodeOrder {
		if e := fields[k]; e.has() {
			key := &jobTable[k]
			src.Keys = append(src.Keys, KeyPos{key.Name, pos(e.val)})
			key.decode(d, w, e.val, key.Name)
		}
	}
	*j, *w, d.baseEnv = *w, Job{}, nil
}

// shell decodes the shell a string command runs with.
func (d *decoder) shell(j *Job, n *yaml.Node, key string) {
	if s, ok := d.text(key, n); ok {
		if !filepath.IsAbs(s) {
			d.errorf(n, "shell: %q is not an absolute path (like /bin/sh)", s)
		}
		j.Shell = d.intern(s)
	}
}

// onLockLost decodes the policy as one of the constants rather than s, as
// overlap does.
func (d *decoder) onLockLost(j *Job, n *yaml.Node, key string) {
	if s, ok := d.text(key, n); ok {
		switch LockLost(s) {
		case LockLostEnd:
			j.OnLockLost = LockLostEnd
		case LockLostContinue:
			j.OnLockLost = LockLostContinue
		default:
			d.errorf(n, "on_lock_lost: %q is not one of end, continue", s)
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
	case !validName(s):
		d.errorf(n, "%s %q may contain only letters, digits, _ . and -", key, s)
	case s == "." || s == "..":
		d.errorf(n, "%s %q is not allowed: it names a directory", key, s)
	case len(s) > maxNameLen:
		d.errorf(n, "%s is longer than %d characters", key, maxNameLen)
	}
	return s
}

// validName matches ^[A-Za-z0-9_.-]+$, and validEnvName (exec.go)
// ^[A-Za-z_][A-Za-z0-9_]*$: written out rather than as regexps, since they
// run for every job and every variable.
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isWordByte(c) && c != '.' && c != '-' {
			return false
		}
	}
	return s != ""
}

// isWordByte reports whether c is an ASCII letter, digit or _.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
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

// heartbeatTimeout decodes a positive duration below the job's timeout
// (decoded first): a longer one would never be the one to end a run.
func (d *decoder) heartbeatTimeout(j *Job, n *yaml.Node, key string) {
	v, ok := d.duration(key, n)
	switch {
	case !ok:
	case v <= 0:
		d.errorf(n, "%s: must be above 0 (leave it out for no heartbeat timeout)", key)
	case j.Timeout > 0 && v >= j.Timeout:
		d.errorf(n, "%s: %v is not below timeout %v: the timeout would always end the run first", key, v, j.Timeout)
	default:
		j.HeartbeatTimeout = v
	}
}

// overlaps are the Overlap policies. A job takes its policy from here
// rather than the string written, which would keep that node's allocation
// alive as long as the job.
var overlaps = []Overlap{OverlapSkip, OverlapQueue, OverlapReplace, OverlapAllow}

func (d *decoder) overlap(j *Job, n *yaml.Node) {
	s, ok := d.text("overlap", n)
	if !ok {
		return
	}
	if i := slices.Index(overlaps, Overlap(s)); i >= 0 {
		j.Overlap = overlaps[i]
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
