package config

import (
	"fmt"
	"os"
	"strings"
	"time"

	"cronvisor/schedule"
)

// intervalSamples is how many upcoming fires Lint looks at for the shortest
// gap: enough to see a weekday-only or a DST-shortened gap.
const intervalSamples = 64

// Lint returns warnings about a valid configuration: things that are legal
// but almost surely not what the author meant, evaluated from the instant
// from. Each points at the value to change. It also looks at the file system
// for each job's dir and shell, since a missing one makes every run fail.
func Lint(cfg *Config, from time.Time) []Problem {
	var ps []Problem
	for _, j := range cfg.Jobs {
		l := linter{path: cfg.Path, job: j}
		l.schedule(from)
		l.files()
		ps = append(ps, l.problems...)
	}
	return tidy(ps)
}

type linter struct {
	path     string
	job      Job
	problems []Problem
}

func (l *linter) warn(key, format string, args ...any) {
	p := l.job.At(key)
	l.problems = append(l.problems, Problem{
		Path: l.path, Line: p.Line, Col: p.Col, Warning: true,
		Message: fmt.Sprintf(format, args...),
	})
}

func (l *linter) schedule(from time.Time) {
	j := l.job
	for _, msg := range schedule.Lint(j.Schedule, j.Location, from) {
		l.warn("schedule", "%s", msg)
	}
	if j.Sched == nil {
		return
	}
	gap := schedule.MinInterval(j.Sched, from, intervalSamples)
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
	if fi, err := os.Stat(j.Dir); err != nil {
		l.warn("dir", "dir %s does not exist: runs will fail to start", j.Dir)
	} else if !fi.IsDir() {
		l.warn("dir", "dir %s is not a directory: runs will fail to start", j.Dir)
	}
	if len(j.Command) == 3 && j.Command[0] == j.Shell && j.Command[1] == "-c" {
		if fi, err := os.Stat(j.Shell); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
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
