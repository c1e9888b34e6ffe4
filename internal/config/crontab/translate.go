package crontab

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"cronvisor/internal/base/schedule"
)

// Job is one translated entry: the values of a jobs.yaml job, as text.
type Job struct {
	Line      int // of the crontab entry
	Name      string
	Schedule  string
	Timezone  string
	User      string
	Command   string
	Shell     string
	Dir       string
	Env       []Var // in order, one per name
	Timeout   string
	KillGrace string
	Overlap   string
	Lock      string // set when jobs shared a lock file; else the job's own name is its lock
	LockFile  string // the flock file the crontab used
	Jitter    string
	Ping      string   // a healthchecks URL the line pinged after its command
	Text      string   // the crontab line
	Comments  []string // the crontab's comments above the entry
	Notes     []string // what changed in the translation
}

// Result is a translated crontab.
type Result struct {
	Jobs     []Job
	Problems []Problem // lines not translated (or not wholly), by line
	Tail     []string  // comments after the last entry
	// UserCrontab is set when a job came from a user crontab, which runs
	// where jobs.yaml says rather than in its owner's home.
	UserCrontab bool
}

// Options are what the translation needs from outside.
type Options struct {
	// Home returns the home directory of user ("" for the user whose
	// crontab it is), where cron starts a job; ok is false for a user
	// unknown here.
	Home func(user string) (dir string, ok bool)
	// Taken are job names already in use (in the file merged into).
	Taken []string
}

// Translate turns a parsed crontab into jobs. Everything it cannot carry
// over is a Problem: an @reboot entry (no job), a MAILTO with an address
// (jobs made, the mail not), a bad line.
func Translate(tab *Tab, opt Options) Result {
	t := translator{opt: opt, names: newNamer(opt.Taken), locks: map[string]string{},
		reported: map[int]bool{}}
	t.problems = append(t.problems, tab.Bad...)
	for _, v := range tab.Env {
		t.checkVar(v)
	}
	for _, e := range tab.Entries {
		if j, ok := t.entry(e); ok {
			t.jobs = append(t.jobs, j)
		}
	}
	t.nameLocks()
	sort.SliceStable(t.problems, func(a, b int) bool { return t.problems[a].Line < t.problems[b].Line })
	res := Result{Jobs: t.jobs, Problems: t.problems, Tail: tab.Tail}
	for _, j := range t.jobs {
		res.UserCrontab = res.UserCrontab || j.User == "" && j.Dir == ""
	}
	return res
}

type translator struct {
	opt      Options
	names    *namer
	locks    map[string]string // lock file -> lock name: jobs sharing a file share a lock
	jobs     []Job
	problems []Problem
	reported map[int]bool
}

func (t *translator) report(line int, format string, args ...any) {
	if !t.reported[line] {
		t.reported[line] = true
		t.problems = append(t.problems, Problem{line, fmt.Sprintf(format, args...)})
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// mailVars are cron's mail settings; cronvisor sends no mail.
var mailVars = map[string]bool{"MAILTO": true, "MAILFROM": true, "CONTENT_TYPE": true, "CONTENT_TRANSFER_ENCODING": true}

// checkVar reports a variable that cannot be carried over, once, at its line.
func (t *translator) checkVar(v Var) {
	switch {
	case mailVars[v.Name] && v.Value != "":
		t.report(v.Line, "%s", mailAdvice(v))
	case v.Name == "SHELL" && !filepath.IsAbs(v.Value):
		t.report(v.Line, "SHELL=%s: not an absolute path; the jobs below keep /bin/sh", v.Value)
	case v.Name == "CRON_TZ":
		if _, err := time.LoadLocation(v.Value); err != nil || v.Value == "" {
			t.report(v.Line, "CRON_TZ=%s: not a zone known here; the jobs below keep the machine's zone", v.Value)
		}
	case v.Name == "RANDOM_DELAY":
		if n, err := strconv.Atoi(v.Value); err != nil || n < 0 {
			t.report(v.Line, "RANDOM_DELAY=%s: not a number of minutes; no jitter set", v.Value)
		}
	case !mailVars[v.Name] && !envName.MatchString(v.Name):
		t.report(v.Line, "%s: not a valid environment variable name for a job; left out", v.Name)
	}
}

// mailAdvice says what to write for a mail setting: cronvisor mails
// nothing itself, and its notify: reaches a mailer or a webhook.
func mailAdvice(v Var) string {
	if v.Name != "MAILTO" {
		return fmt.Sprintf("%s=%s: cronvisor sends no mail itself; a notify: command (see MAILTO) sets its own", v.Name, v.Value)
	}
	return fmt.Sprintf("MAILTO=%s: cronvisor sends no mail itself; each run's output is kept in its log (cronvisor logs, history, the console). "+
		"For mail on failure add to defaults: notify: [{on: [failure, timeout], command: 'mail -s \"cronvisor: $CRONVISOR_JOB $CRONVISOR_EVENT\" %s'}] "+
		"(the output tail is its stdin), or a webhook (url:)", v.Value, v.Value)
}

// tildeNote says how cronvisor's ~ differs from cronie's.
const tildeNote = "cronie draws ~ at random each time it loads the crontab; cronvisor draws it from the job's name: " +
	"the same on every host and across restarts, not the time cronie picked (cronvisor next NAME prints it)"

// entry translates one entry; ok is false when no job can be made.
func (t *translator) entry(e Entry) (Job, bool) {
	if e.Schedule == "@reboot" {
		t.report(e.Line, "@reboot: cronvisor has no start-up trigger; run it from the boot system (a systemd unit) instead: %s", e.Command)
		return Job{}, false
	}
	if _, err := schedule.Parse(e.Schedule, time.UTC); err != nil {
		t.report(e.Line, "%v", err)
		return Job{}, false
	}
	if _, ok := t.home(e.User); !ok {
		// A job whose user is not here would not validate: the output must.
		t.report(e.Line, "user %s: not on this machine; not imported (create the user, or change the line, and import again)", e.User)
		return Job{}, false
	}
	j := Job{Line: e.Line, Schedule: e.Schedule, User: e.User, Comments: e.Comments, Text: e.Text, Timeout: "none"}
	j.Dir = t.environment(&j, e.Env)
	named, ok := t.command(&j, e)
	if !ok {
		return Job{}, false
	}
	if j.User == "" && j.Dir == "" && relativePath(named) {
		j.Notes = append(j.Notes, "cron ran this in its owner's home; it runs in jobs.yaml's directory now: set dir:")
	}
	if strings.Contains(e.Schedule, "~") {
		j.Notes = append(j.Notes, tildeNote)
	}
	base, arg := baseName(named)
	if named == "" {
		base = "healthchecks_ping"
	}
	j.Name = t.names.name(base, arg)
	return j, true
}

// command sets j's command from e's: cron's % rule applied, a
// healthchecks ping after it made ping:, the wrappers cronvisor does
// itself taken off. It returns the command the job is named after; ok is
// false, the line reported, when no job is made.
func (t *translator) command(j *Job, e Entry) (named string, ok bool) {
	command, input, hasInput := splitPercent(e.Command)
	if _, whole := words(strings.ReplaceAll(e.Command, "%", "")); hasInput && whole {
		if _, ok := words(command); !ok {
			t.report(e.Line, "cron ends the command at its first %%, which leaves a quote open in %q: write \\%% for a literal %% and import again; not imported",
				clip(command, 60))
			return "", false
		}
	}
	command = strings.TrimSpace(command)
	if rest, url, ok := splitPing(command); ok && !hasInput {
		j.Ping, command = url, rest
	}
	u := unwrap(command)
	j.Notes = u.notes
	if u.dir != "" {
		j.Dir = u.dir
	}
	if u.timeout > 0 {
		j.Timeout = formatDuration(u.timeout)
	}
	if u.killGrace != nil {
		j.KillGrace = formatDuration(*u.killGrace)
	}
	if u.lockPath != "" {
		j.LockFile, j.Overlap = u.lockPath, u.overlap
	}
	j.Command = u.command
	switch {
	case j.Ping != "" && command == "":
		j.Command = "true"
		j.Notes = append(j.Notes, "the line only pinged healthchecks: ping: does it after each run of true")
	case j.Ping != "":
		j.Notes = append(j.Notes, "the healthchecks ping after && is ping: now: sent on success as before, and /fail on a failure")
	}
	if hasInput {
		j.Command = withInput(u.command, input)
		j.Notes = append(j.Notes, "the text after % in the crontab is the command's standard input, as under cron")
	}
	if strings.Contains(j.Command, "run-parts") {
		j.Notes = append(j.Notes, "run-parts runs every script of its directory in turn; a job per script gets each its own lock, timeout and history")
	}
	if strings.TrimSpace(j.Command) == "" {
		t.report(e.Line, "nothing left to run once the wrappers were taken off")
		return "", false
	}
	return u.command, true
}

// relativePath reports whether cmd's program is a relative path
// (./backup.sh, bin/x), which finds its file from the working directory.
func relativePath(cmd string) bool {
	ws, ok := words(cmd)
	if !ok || len(ws) == 0 {
		return false
	}
	w := ws[0].val
	return strings.Contains(w, "/") && !strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "$") && !strings.HasPrefix(w, "~")
}

// clip shortens a command quoted in a report.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// environment applies the variables set above an entry: CRON_TZ becomes
// the zone, SHELL the shell, RANDOM_DELAY the jitter, the rest env. It
// returns the job's home directory, where cron starts it: HOME if set,
// else the user field's user's; "" for a user crontab.
func (t *translator) environment(j *Job, vars []Var) string {
	idx := map[string]int{}
	var home string
	for _, v := range vars {
		switch {
		case mailVars[v.Name] || t.reported[v.Line]:
			continue
		case v.Name == "CRON_TZ":
			j.Timezone = v.Value
			continue
		case v.Name == "SHELL":
			j.Shell = v.Value
			continue
		case v.Name == "RANDOM_DELAY":
			n, _ := strconv.Atoi(v.Value)
			j.Jitter = ""
			if n > 0 {
				j.Jitter = formatDuration(time.Duration(n) * time.Minute)
			}
			continue
		case v.Name == "HOME":
			home = v.Value
		}
		if i, ok := idx[v.Name]; ok {
			j.Env[i].Value = v.Value
			continue
		}
		idx[v.Name] = len(j.Env)
		j.Env = append(j.Env, Var{Name: v.Name, Value: v.Value})
	}
	if home == "" && j.User != "" {
		// A user crontab's owner is not known from its text (root may
		// import alice's, or a copy from another host), and its jobs get no
		// user:: the importer's home would be a wrong dir written as if
		// true. They run in jobs.yaml's directory, as the header says.
		home, _ = t.home(j.User)
	}
	return home
}

func (t *translator) home(user string) (string, bool) {
	if t.opt.Home == nil {
		return "", true
	}
	return t.opt.Home(user)
}

// nameLocks names the locks of flock files that several jobs shared, so
// that they still exclude each other; a file only one job used needs no
// name, the job's own lock does. A lock name is unique among job names
// too: a job's lock defaults to its name.
func (t *translator) nameLocks() {
	users := map[string]int{}
	for _, j := range t.jobs {
		if j.LockFile != "" {
			users[j.LockFile]++
		}
	}
	for i := range t.jobs {
		j := &t.jobs[i]
		if users[j.LockFile] < 2 {
			continue
		}
		if n, ok := t.locks[j.LockFile]; ok {
			j.Lock = n
			continue
		}
		j.Lock = t.sharedLock(j.LockFile)
		t.locks[j.LockFile] = j.Lock
	}
}

// sharedLock names the lock of a shared flock file after the file. The
// name may be that of a job using the file (its default lock is this one
// anyway), never that of another job or another file's lock.
func (t *translator) sharedLock(file string) string {
	b := filepath.Base(file)
	for _, ext := range []string{".lock", ".lck", ".pid"} {
		b = strings.TrimSuffix(b, ext)
	}
	b = sanitize(b)
	for i := 1; ; i++ {
		c := b
		if i > 1 {
			c = b + "_" + strconv.Itoa(i)
		}
		if t.lockFree(c, file) {
			return c
		}
	}
}

func (t *translator) lockFree(name, file string) bool {
	for f, n := range t.locks {
		if n == name && f != file {
			return false
		}
	}
	for _, j := range t.jobs {
		if j.Name == name && j.LockFile != file || j.Lock == name && j.LockFile != file {
			return false
		}
	}
	for _, n := range t.opt.Taken {
		if n == name {
			return false
		}
	}
	return true
}
