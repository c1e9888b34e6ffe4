package config

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Job keys, by their index in jobTable. A job's entries are held in an
// array indexed by them (jobFields) rather than in maps: with thousands of
// jobs, making the maps cost more than decoding what they held.
const (
	kName = iota
	kSchedule
	kTimezone
	kCommand
	kShell
	kDir
	kEnv
	kTimeout
	kKillGrace
	kOverlap
	kLock
	kJitter
	kCatchUp
	kEnabled
	kOnLockLost
	kLogOutput
	kUser
	kGroup
	kRetries
	kRetryBackoff
	kRetryBackoffMax
	kRetryOn
	kWarnAfter
	kWarnFast
	kPing
	kPingSkips
	kNotify
	kNice
	kIONice
	kOOMScoreAdj
	kNoFile
	kNProc
	kCore
	kMemoryMax
	kMemoryHigh
	kCPUMax
	kTasksMax
	kIOWeight
	kHeartbeatTimeout
	kSkipOn
	kOnlyOn
	kUses
	kOnFull
	kMaxWait
	numJobKeys
)

// jobFields holds a job's entries by key index; see keyed.
type jobFields [numJobKeys]entry

// jobKey is one key of a job: what help shows (Key), how its value is
// decoded into a Job, and whether defaults may set it. Everything the
// decoder knows about a job key is here, so a key cannot be listed in
// one place and forgotten in another (TestJobTable).
type jobKey struct {
	Key
	// decode sets the key's field of j from n, reporting problems.
	decode func(d *decoder, j *Job, n *yaml.Node, key string)
	// needs names a key whose decoded value decode reads from j, which is
	// then decoded first (the zone before the schedule).
	needs string
	// notInDefaults is why defaults may not set the key; "" when they may.
	notInDefaults string
}

// jobTable is every job key in the order help shows them. Its decode
// functions must not read jobTable or what is made from it (jobKeys):
// that would be an initialization cycle; they get the key's name instead.
var jobTable = [numJobKeys]jobKey{
	kName: {Key: Key{"name", "(required)", "unique, [A-Za-z0-9_.-]+; names the job's lock and logs"},
		decode:        func(d *decoder, j *Job, n *yaml.Node, key string) { j.Name = d.name(key, n) },
		notInDefaults: "defaults cannot set name: each job needs its own"},
	kSchedule: {Key: Key{"schedule", "(required)", "5 fields, 6 with leading seconds, @yearly..@hourly, or @every DURATION; H and ~ draw from the job's name"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.schedule(j, n) }, needs: "timezone"},
	kTimezone: {Key: Key{"timezone", "local zone", "IANA zone the schedule is read in (Europe/Berlin, UTC)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.timezone(j, n) }},
	kCommand: {Key: Key{"command", "(required)", "a string runs with `shell -c`; a list is exec'd as argv"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.command(j, n) }, needs: "shell"},
	kShell: {Key: Key{"shell", DefaultShell, "absolute path of the shell a string command runs with"},
		decode: (*decoder).shell},
	kDir: {Key: Key{"dir", "this file's dir", "working directory of the run; relative to this file"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) {
			if s, ok := d.text(key, n); ok {
				j.Dir = d.dirAbs(s)
			}
		}},
	kEnv: {Key: Key{"env", "{}", "variables on top of the supervisor's environment (extends defaults' env)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { j.Env = d.jobEnv(d.baseEnv, n) }},
	kTimeout: {Key: Key{"timeout", "(required)", "max runtime, or none; then SIGTERM to the run's process group, SIGKILL after kill_grace"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.timeout(j, n) }},
	kKillGrace: {Key: Key{"kill_grace", DefaultKillGrace.String(), "time between SIGTERM and SIGKILL when a run is ended"},
		decode: durationOf(func(j *Job) *time.Duration { return &j.KillGrace })},
	kOverlap: {Key: Key{"overlap", string(OverlapSkip), "skip | queue | replace | allow: what a fire does while the lock is held"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.overlap(j, n) }},
	kLock: {Key: Key{"lock", "the job's name", "lock name; jobs sharing a lock never run at the same time"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.Lock = d.intern(d.name(key, n)) },
		// One lock shared by every job would run them one at a time,
		// which nobody wants from a line in defaults.
		notInDefaults: "defaults cannot set lock: a lock shared by all jobs would run them one at a time; set it per job"},
	kJitter: {Key: Key{"jitter", "0s", "a delay drawn from the job's name and slot, up to this much"},
		decode: durationOf(func(j *Job) *time.Duration { return &j.Jitter })},
	kCatchUp: {Key: Key{"catch_up", "0s", "after downtime, run once if a fire was missed less than this long ago"},
		decode: durationOf(func(j *Job) *time.Duration { return &j.CatchUp })},
	kEnabled: {Key: Key{"enabled", "true", "false keeps the job in the file without scheduling it"},
		decode: booleanOf(func(j *Job) *bool { return &j.Enabled })},
	kOnLockLost: {Key: Key{"on_lock_lost", string(LockLostEnd), "end | continue: a run whose Redis or SQL lock is lost is ended, or goes on unguarded"},
		decode: (*decoder).onLockLost},
	kLogOutput: {Key: Key{"log_output", "true", "also copy output lines into the daemon's log (rate-capped)"},
		decode: booleanOf(func(j *Job) *bool { return &j.LogOutput })},
	kUser: {Key: Key{"user", "the supervisor's", "run as this user (name or uid) with its groups, HOME, USER, LOGNAME, SHELL; root supervisor only"},
		decode: checkText},
	kGroup: {Key: Key{"group", "the user's primary", "run with this group (name or gid)"},
		decode: checkText},
	kRetries: {Key: Key{"retries", "0", "extra attempts in the same slot, under the same lock, after an outcome in retry_on"},
		decode: (*decoder).retries},
	kRetryBackoff: {Key: Key{"retry_backoff", DefaultRetryBackoff.String(), "wait before the first retry, doubling per attempt"},
		decode: durationOf(func(j *Job) *time.Duration { return &j.RetryBackoff })},
	kRetryBackoffMax: {Key: Key{"retry_backoff_max", DefaultRetryBackoffMax.String(), "longest wait between attempts"},
		decode: durationOf(func(j *Job) *time.Duration { return &j.RetryBackoffMax })},
	kRetryOn: {Key: Key{"retry_on", "[failed, timeout]", "the outcomes retried"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { j.RetryOn = d.retryOn(n) }},
	kWarnAfter: {Key: Key{"warn_after", "0s", "a slow notification and a console mark once a run passes this (0: off; auto: learned from the job's runs)"},
		decode: learnedOf(func(j *Job) (*time.Duration, *bool) { return &j.WarnAfter, &j.WarnAfterLearned })},
	kWarnFast: {Key: Key{"warn_fast", "off", "a fast notification when a run ends ok in less than this (auto: learned from the job's runs)"},
		decode: learnedOf(func(j *Job) (*time.Duration, *bool) { return &j.WarnFast, &j.WarnFastLearned })},
	kPing: {Key: Key{"ping", "", "monitor URL, healthchecks.io scheme: /start, success, /fail or /EXIT, ?rid=RUN_ID"},
		decode: (*decoder).ping},
	kPingSkips: {Key: Key{"ping_skips", "false", "also ping /fail with the reason for skips and misses"},
		decode: booleanOf(func(j *Job) *bool { return &j.PingSkips })},
	kNotify: {Key: Key{"notify", "[]", "notification targets: each {on: [events], url: or command:, headers:, after_skips:}"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { j.Notify = d.targets(n) }},
	kNice: {Key: Key{"nice", "the supervisor's", "-20..19: the run's scheduling priority (below the supervisor's own: root only)"},
		decode: (*decoder).nice},
	kIONice: {Key: Key{"ionice", "the supervisor's", "idle, best-effort[:N] or realtime:N (N 0..7, best-effort alone is 4; realtime: root only)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { d.ionice(&j.Limits, n) }},
	kOOMScoreAdj: {Key: Key{"oom_score_adj", "the supervisor's", "-1000..1000: how readily the OOM killer picks the run (below the supervisor's own: root only)"},
		decode: (*decoder).oomScoreAdj},
	kNoFile: {Key: Key{"nofile", "the supervisor's", "RLIMIT_NOFILE, soft and hard: open files, a count or unlimited"},
		decode: rlimitOf(func(l *Limits) **uint64 { return &l.NoFile })},
	kNProc: {Key: Key{"nproc", "the supervisor's", "RLIMIT_NPROC, soft and hard: processes of the run's user, a count or unlimited"},
		decode: rlimitOf(func(l *Limits) **uint64 { return &l.NProc })},
	kCore: {Key: Key{"core", "the supervisor's", "RLIMIT_CORE, soft and hard: core dump size, a size (0: none) or unlimited"},
		decode: rlimitOf(func(l *Limits) **uint64 { return &l.Core })},
	kMemoryMax: {Key: Key{"memory_max", "none", "the run's cgroup memory.max: a size in bytes or K, M, G, T (base 1024)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.Limits.MemoryMax, _ = d.memSize(key, n) }},
	kMemoryHigh: {Key: Key{"memory_high", "none", "the run's cgroup memory.high: reclaim and throttle above this size"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.Limits.MemoryHigh, _ = d.memSize(key, n) }},
	kCPUMax: {Key: Key{"cpu_max", "none", "the run's cgroup cpu.max: cores (0.5, 2) or a percentage of one core (50%)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, _ string) { j.Limits.CPUMax = d.cpuMax(n) }},
	kTasksMax: {Key: Key{"tasks_max", "none", "the run's cgroup pids.max: processes and threads"},
		decode: (*decoder).tasksMax},
	kIOWeight: {Key: Key{"io_weight", "none", "the run's cgroup io.weight: 1..10000 (100 is the kernel's default)"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.Limits.IOWeight, _ = d.intIn(key, n, 1, 10000) }},
	kHeartbeatTimeout: {Key: Key{"heartbeat_timeout", "0s", "end a run that has not beaten (`cronvisor heartbeat`) for this long, as timeout does (0: off)"},
		decode: (*decoder).heartbeatTimeout, needs: "timeout"},
	kSkipOn: {Key: Key{"skip_on", "[]", "calendars (calendars:) whose days the job's scheduled slots are skipped on, each recorded `skipped: calendar NAME (DATE)`"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.SkipOn = d.calendarRefs(key, n) }},
	kOnlyOn: {Key: Key{"only_on", "[]", "calendars the job runs on: a scheduled slot on a day none of them lists is recorded skipped"},
		decode: func(d *decoder, j *Job, n *yaml.Node, key string) { j.OnlyOn = d.calendarRefs(key, n) }},
	kUses: {Key: Key{"uses", "[]", "resources a run takes a slot of after its lock: [db], or {db: 2} for two slots"},
		decode: (*decoder).uses},
	kOnFull: {Key: Key{"on_full", string(OnFullSkip), "skip | wait: what a fire does when a resource it uses has no free slot"},
		decode: (*decoder).onFull},
	kMaxWait: {Key: Key{"max_wait", DefaultMaxWait.String(), "with on_full: wait, how long a fire waits for its slots before it is skipped"},
		decode: (*decoder).maxWait},
}

var (
	jobRef = func() []Key {
		keys := make([]Key, len(jobTable))
		for i, k := range jobTable {
			keys[i] = k.Key
		}
		return keys
	}()
	jobKeys = keyNames(jobRef)
	// defaultKeys are the job keys defaults may set, and defaultIndex
	// their indexes in jobTable.
	defaultKeys, defaultIndex = keysForDefaults()
	// decodeOrder is jobTable's order with each key's needs moved before
	// it: the zone before the schedule, the shell before a string command.
	decodeOrder = orderByNeeds(jobKeys, jobTable[:])
)

func keysForDefaults() (names []string, index []int) {
	for i, k := range jobTable {
		if k.notInDefaults == "" {
			names, index = append(names, k.Name), append(index, i)
		}
	}
	return names, index
}

// orderByNeeds lists the indexes of keys, each after the key it needs
// (keys needing each other in a circle are listed, out of order, for
// TestDecodeOrder to report).
func orderByNeeds(names []string, keys []jobKey) []int {
	order, seen := make([]int, 0, len(keys)), make([]bool, len(keys))
	var add func(i int)
	add = func(i int) {
		if seen[i] {
			return
		}
		seen[i] = true
		if need := slices.Index(names, keys[i].needs); need >= 0 {
			add(need)
		}
		order = append(order, i)
	}
	for i := range keys {
		add(i)
	}
	return order
}

func isJobKey(k string) bool { return slices.Contains(jobKeys, k) }

// durationOf decodes a duration into the field field returns.
func durationOf(field func(*Job) *time.Duration) func(*decoder, *Job, *yaml.Node, string) {
	return func(d *decoder, j *Job, n *yaml.Node, key string) { d.setDuration(field(j), key, n) }
}

// learnedOf decodes a duration, off (0) or auto (learned) into the
// fields field returns.
func learnedOf(field func(*Job) (*time.Duration, *bool)) func(*decoder, *Job, *yaml.Node, string) {
	return func(d *decoder, j *Job, n *yaml.Node, key string) {
		dur, learned := field(j)
		*dur, *learned = 0, false
		rn := resolve(n)
		if rn.Kind == yaml.ScalarNode && rn.Tag != "!!bool" {
			switch rn.Value {
			case "auto":
				*learned = true
				return
			case "off":
				return
			}
		}
		if _, err := ParseDuration(strings.TrimSpace(rn.Value)); err != nil && rn.Kind == yaml.ScalarNode && !isBareNumber(rn.Value) {
			d.errorf(n, "%s: %q is neither a duration, auto nor off; write it like 90s, 10m, auto or off", key, rn.Value)
			return
		}
		d.setDuration(dur, key, n)
	}
}

// booleanOf decodes true or false into the field field returns.
func booleanOf(field func(*Job) *bool) func(*decoder, *Job, *yaml.Node, string) {
	return func(d *decoder, j *Job, n *yaml.Node, key string) { *field(j), _ = d.boolean(key, n) }
}

// rlimitOf decodes a resource limit into the field field returns.
func rlimitOf(field func(*Limits) **uint64) func(*decoder, *Job, *yaml.Node, string) {
	return func(d *decoder, j *Job, n *yaml.Node, key string) {
		if v, ok := d.rlimit(key, n); ok {
			*field(&j.Limits) = &v
		}
	}
}

// checkText checks user and group, which are resolved together once both
// are known; see runAs.
func checkText(d *decoder, _ *Job, n *yaml.Node, key string) { d.text(key, n) }
