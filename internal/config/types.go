// Package config turns jobs.yaml into plain job values and reports every
// problem with its position. It does no I/O beyond reading the file,
// looking whether state_dir is a file and looking up the users and groups
// that jobs run as (os/user), except that Lint looks for the directories
// and shells the jobs name. What execve(2) will accept is
// judged from this process's environment and stack limit, which jobs
// inherit when this process is the supervisor.
//
// Beyond the keys of the contract, jobs.yaml may hold:
//
//	history:            # retention of run records (defaults shown)
//	  keep_runs: 1000   # per job
//	  keep_age: 720h
//	  log_limit: 1MiB   # output kept per run: bytes, or KiB/MiB/GiB, KB/MB/GB
//	durability: machine # or process: no fdatasync, safe against crashes of
//	                    # processes only (run.Durability)
//	x-anything: ...     # ignored top-level keys, to hold YAML anchors
//
// and YAML merge keys (<<: *anchor) anywhere a mapping is expected. A job's
// env is merged with the env of defaults variable by variable.
package config

import (
	"time"

	"cronvisor/internal/base/calendar"
	"cronvisor/internal/base/run"
	"cronvisor/internal/base/schedule"
)

// Overlap is what a fire does while the job's lock is held.
type Overlap string

// Overlap policies, as in the contract.
const (
	OverlapSkip    Overlap = "skip"
	OverlapQueue   Overlap = "queue"
	OverlapReplace Overlap = "replace"
	OverlapAllow   Overlap = "allow"
)

// LockLost is a job's on_lock_lost policy.
type LockLost string

// on_lock_lost policies.
const (
	LockLostEnd      LockLost = "end"      // end the run like a timeout, reason "lock lost"
	LockLostContinue LockLost = "continue" // let it finish unguarded
)

// Config is a loaded, validated jobs.yaml with defaults applied.
type Config struct {
	Path          string        // the file it was read from, as given
	StateDir      string        // absolute; relative state_dir is resolved against the file's directory
	ShutdownGrace time.Duration // default 30s
	LockBackend   LockBackend
	// HistoryBackend is where the history every host shares lives; its
	// zero value (Type "") is the local SQLite store alone.
	HistoryBackend HistoryBackend
	History        HistoryPolicy
	Metrics        Metrics
	Console        Console
	// Durability is what the state dir's records survive: a machine
	// crash (run.DurabilityMachine, the default) or only crashes of
	// processes (run.DurabilityProcess, no fdatasync).
	Durability run.Durability
	// Resources are the declared resources (resources:), by name, with
	// their number of slots: "at most N of the jobs that use it at once".
	Resources map[string]int
	// Calendars are the named sets of days (calendars:) that jobs'
	// skip_on and only_on name.
	Calendars map[string]*calendar.Calendar
	Jobs      []Job
	// SecretEnv names the environment variables that lock_backend's url
	// or dsn and history_backend's url expanded (${REDIS_PASSWORD}): the supervisor's secrets, which jobs
	// do not get unless their own env sets them.
	SecretEnv []string
	// UnsetEnv, only from LoadForReading, names the variables that
	// lock_backend's url or dsn needs and this process's environment
	// lacks; LockBackend.URL is empty then and the backend cannot be
	// asked.
	UnsetEnv []string
	// HistoryUnsetEnv, only from LoadForReading, names the variables
	// that history_backend's url needs and this process's environment
	// lacks; HistoryBackend.URL is empty then and the shared history
	// cannot be asked.
	HistoryUnsetEnv []string
	// Source is where the settings were written, for messages. It is kept
	// beside the jobs rather than in them so that a Job holds only what
	// runs: a reload compares jobs, and an edit that moves a job's lines
	// changes nothing about it.
	Source Source
	// Text is the file's bytes as Load read them: what a daemon applied,
	// kept so that a dry run can compare the file with it (plan.Diff).
	Text []byte
}

// Source holds where a file's settings were written.
type Source struct {
	StateDir Pos         // zero when state_dir is not written
	Jobs     []JobSource // Jobs[i] is where Config.Jobs[i] was written
}

// JobSource is where one job was written: its mapping and, per key, its
// value. A value taken from defaults points into the defaults block.
// Lint and later messages about a loaded job (a missing dir) use it to
// name the line that needs changing. Keys is a slice rather than a map: a
// job has a handful of keys, and with 10,000 jobs the maps were a third of
// the loaded config's memory.
type JobSource struct {
	Pos
	Keys []KeyPos
}

// LockBackend selects where locks live.
type LockBackend struct {
	Type   string        // a registered backend's kind (RegisterLockBackends); "file" by default
	URL    string        // its url or dsn (AddressKey); ${ENV} expanded
	TTL    time.Duration // a lease's, for a backend that takes one; default 30s
	Prefix string        // network backends' name prefix; "" for their default
	Line   int           // position of the lock_backend key, for messages (0 when absent)
	Col    int
}

// BackendFile is the default lock backend's kind (file.Backend).
const BackendFile = "file"

// HistoryBackend selects the shared history (history_backend). The local
// SQLite store is always written; with Type "postgres" its records are
// also shipped to URL, where every host of the fleet reads them.
type HistoryBackend struct {
	Type string // "" or "sqlite": the local store alone; "postgres"
	URL  string // postgres url; ${ENV} expanded
	Line int    // position of the history_backend key, for messages (0 when absent)
	Col  int
}

// History backend types.
const (
	HistoryLocal    = "sqlite"
	HistoryPostgres = "postgres"
)

// HistoryPolicy bounds the run history (issue 5).
type HistoryPolicy struct {
	KeepRuns int           // per job; default 1000
	KeepAge  time.Duration // default 30 days (720h)
	LogLimit int64         // bytes of output kept per run log; default 1 MiB
}

// Job is one fully resolved job: what runs, nothing about where it was
// written (see Source), so that two Jobs are equal when they run alike.
type Job struct {
	Name     string
	Schedule string            // the expression as written
	Sched    schedule.Schedule // parsed, evaluated in Location (or its CRON_TZ prefix)
	Timezone string            // as written; empty means the machine's local zone
	Location *time.Location

	// Command is the argv to exec. When the YAML gave a string, Command is
	// {Shell, "-c", string} and Shell is the shell used.
	//
	// Jobs with equal commands share one Command slice, and jobs with
	// equal env one Env map (10,000 jobs may run the same command with the
	// env of defaults): read them, never modify them.
	Command []string
	Shell   string // default /bin/sh
	Dir     string // default: the directory of jobs.yaml
	Env     map[string]string

	Timeout   time.Duration // 0 means none (only when `timeout: none` was written)
	KillGrace time.Duration // default 10s
	Overlap   Overlap       // default skip
	Lock      string        // default Name
	Jitter    time.Duration // a delay drawn per slot, up to this much: see Delay
	CatchUp   time.Duration
	Enabled   bool // default true
	// OnLockLost is what a run does when its lease is lost (a network lock
	// backend: renewal failed or found another holder). Default end.
	OnLockLost LockLost
	// LogOutput copies the run's output lines into the daemon's own log
	// (rate-capped; the run's log file gets them all). Default true.
	LogOutput bool
	// RunAs is who the run's processes are, from user: and group: (nil:
	// the supervisor's own user), resolved when the file is loaded.
	RunAs *Account

	// Retries are extra attempts in the same slot under the same lock,
	// after an outcome in RetryOn, waiting RetryBackoff doubling up to
	// RetryBackoffMax between them (see alert.go).
	Retries         int
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	RetryOn         RetryOn
	WarnAfter       time.Duration // a slow notification once a run passes it; 0: off
	// WarnAfterLearned: warn_after: auto, the bound learned from the
	// job's runs (package durations) instead of WarnAfter.
	WarnAfterLearned bool
	// WarnFast: a fast notification when a run ends ok in less than it
	// (0: off); WarnFastLearned: warn_fast: auto, the learned bound.
	WarnFast        time.Duration
	WarnFastLearned bool
	Ping            string   // healthchecks.io-style monitor URL; "" for none
	PingSkips       bool     // report skips and misses to Ping as /fail
	Notify          []Target // read-only, like Command
	Limits          Limits   // resource limits (resources.go)
	// HeartbeatTimeout ends a run that has not beaten for this long
	// (docs/heartbeats.md); 0: off. Below Timeout when both are set.
	HeartbeatTimeout time.Duration
	// Uses are the resources (Config.Resources) a run takes slots of,
	// after its lock, sorted by resource name; none: the job uses none.
	Uses []Use
	// OnFull is what a fire does when a resource it uses has no free
	// slot: skip (default) or wait up to MaxWait, then skip.
	OnFull  OnFull
	MaxWait time.Duration
	// SkipOn and OnlyOn are calendars (Config.Calendars): a scheduled
	// slot on a day of a SkipOn calendar, or on no day of every OnlyOn
	// calendar, is recorded skipped instead of run.
	SkipOn, OnlyOn []*calendar.Calendar
}

// Use is a job's use of a declared resource: Weight of its slots (1
// unless uses: gave a map).
type Use struct {
	Resource string
	Weight   int
}

// OnFull is a job's on_full.
type OnFull string

// The on_full values.
const (
	OnFullSkip OnFull = "skip"
	OnFullWait OnFull = "wait"
)

// Account is a user and group a job runs as, looked up in the system's
// user database when the file was loaded.
type Account struct {
	User string // the user's name ("" with only group: set: the supervisor's own uid)
	Home string // from the user's passwd entry
	UID  uint32
	GID  uint32
	// Groups are the supplementary groups: the user's, as initgroups(3)
	// gives them to a cron job; none with only group: set.
	Groups []uint32
}

// KeyPos is where a job key's value was written.
type KeyPos struct {
	Key string
	Pos
}

// Pos is a 1-based line and column in jobs.yaml.
type Pos struct{ Line, Col int }

// At is the position of key's value, or of the job itself when the key was
// not written (its value is a default).
func (s JobSource) At(key string) Pos {
	for _, p := range s.Keys {
		if p.Key == key {
			return p.Pos
		}
	}
	return s.Pos
}

// Problem is one finding about a file, printed as PATH:LINE:COL: message.
type Problem struct {
	Path    string
	Line    int
	Col     int
	Message string
	Warning bool // lint findings: legal but almost surely wrong
}

// JobSource is where Jobs[i] was written: the zero JobSource for a Config
// built by hand rather than parsed.
func (c *Config) JobSource(i int) JobSource {
	if i < len(c.Source.Jobs) {
		return c.Source.Jobs[i]
	}
	return JobSource{}
}

// Job returns the job called name.
func (c *Config) Job(name string) (Job, bool) {
	for _, j := range c.Jobs {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}
