package config

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"time"

	"cronvisor/internal/base/schedule"
)

// intervalSamples is how many upcoming fires Lint looks at for the shortest
// gap: enough to see a weekday-only or a DST-shortened gap.
const intervalSamples = 64

// Lint returns warnings about a valid configuration: things that are legal
// but almost surely not what the author meant, evaluated from the instant
// from. Each points at the value to change. It also looks at the file system
// for each job's dir and shell, since a missing one makes every run fail,
// and, given WithControllerCheck, at whether this host can apply the
// jobs' cgroup limits.
func Lint(cfg *Config, from time.Time, opts ...LintOption) []Problem {
	var ps []Problem
	cache := lintCache{
		schedules:   make(map[schedKey][]string),
		gaps:        make(map[schedule.Schedule]time.Duration),
		files:       make(map[string]fileStat),
		controllers: make(map[string]error),
	}
	for _, o := range opts {
		o(&cache.opts)
	}
	for i, j := range cfg.Jobs {
		l := linter{path: cfg.Path, job: j, src: cfg.JobSource(i), cache: &cache}
		l.schedule(from)
		l.files()
		l.limits()
		ps = append(ps, l.problems...)
	}
	return tidy(ps)
}

type linter struct {
	path     string
	job      Job
	src      JobSource
	cache    *lintCache
	problems []Problem
}

// lintCache holds what Lint found for one job that others share: the jobs
// of a file tend to share a few schedules, a dir and a shell, and looking
// 64 fires ahead or at the file system once per job was most of the time
// Lint took for thousands of them.
type lintCache struct {
	schedules map[schedKey][]string // schedule.Lint
	gaps      map[schedule.Schedule]time.Duration
	files     map[string]fileStat
	// controllers are ControllerCheck's answers by controller.
	controllers map[string]error
	opts        lintOptions
}

type fileStat struct {
	fi  os.FileInfo
	err error
}

func (c *lintCache) scheduleLint(expr string, loc *time.Location, name string, from time.Time) []string {
	key := schedKey{expr, loc, ""}
	if schedule.Hashed(expr) {
		key.seed = name
	}
	msgs, ok := c.schedules[key]
	if !ok {
		msgs = schedule.LintFor(expr, loc, key.seed, from)
		c.schedules[key] = msgs
	}
	return msgs
}

// gap is the shortest interval between fires of s from from. Only pointer
// schedules, which all of Parse's are, are remembered: another type might
// not be comparable.
func (c *lintCache) gap(s schedule.Schedule, from time.Time) time.Duration {
	if reflect.TypeOf(s).Kind() != reflect.Pointer {
		return schedule.MinInterval(s, from, intervalSamples)
	}
	gap, ok := c.gaps[s]
	if !ok {
		gap = schedule.MinInterval(s, from, intervalSamples)
		c.gaps[s] = gap
	}
	return gap
}

func (c *lintCache) stat(path string) (os.FileInfo, error) {
	f, ok := c.files[path]
	if !ok {
		f.fi, f.err = os.Stat(path)
		c.files[path] = f
	}
	return f.fi, f.err
}

func (l *linter) warn(key, format string, args ...any) {
	p := l.src.At(key)
	l.problems = append(l.problems, Problem{
		Path: l.path, Line: p.Line, Col: p.Col, Warning: true,
		Message: fmt.Sprintf(format, args...),
	})
}

// fail reports an error at key: the file is valid, but this host cannot
// do what it says.
func (l *linter) fail(key, format string, args ...any) {
	l.warn(key, format, args...)
	l.problems[len(l.problems)-1].Warning = false
}

func (l *linter) schedule(from time.Time) {
	j := l.job
	for _, msg := range l.cache.scheduleLint(j.Schedule, j.Location, j.Name, from) {
		l.warn("schedule", "%s", msg)
	}
	if j.Sched == nil {
		return
	}
	gap := l.cache.gap(j.Sched, from)
	if gap <= 0 {
		return
	}
	if j.Timeout >= gap {
		switch j.Overlap {
		case OverlapSkip:
			l.warn("timeout", "timeout %s is not shorter than the %s between fires: "+
				"a run that needs its whole timeout makes the next fire skip", short(j.Timeout), short(gap))
		case OverlapQueue:
			l.warn("timeout", "timeout %s is not shorter than the %s between fires: "+
				"runs that need their whole timeout queue up back to back", short(j.Timeout), short(gap))
		}
	}
	if j.Jitter >= gap {
		l.warn("jitter", "jitter %s is not shorter than the %s between fires: "+
			"a delayed run can start after the next fire", short(j.Jitter), short(gap))
	}
}

// files checks the working directory and, for a string command, the shell.
// Warnings, not errors: a mount may appear before the first fire.
func (l *linter) files() {
	j := l.job
	if fi, err := l.cache.stat(j.Dir); err != nil {
		l.warn("dir", "dir %s does not exist: runs will fail to start", j.Dir)
	} else if !fi.IsDir() {
		l.warn("dir", "dir %s is not a directory: runs will fail to start", j.Dir)
	}
	if len(j.Command) == 3 && j.Command[0] == j.Shell && j.Command[1] == "-c" {
		if fi, err := l.cache.stat(j.Shell); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			l.warn("shell", "shell %s is not an executable file: runs will fail to start", j.Shell)
		}
	}
}

// short formats a duration without the zero units Go prints: 2h, not 2h0m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
